import FCMCore

/// A value declared as a FID must look like one: 22 base64url characters starting with c, d, e or f
/// (firebase-js-sdk `VALID_FID_PATTERN`, wire reference §7). A token pasted under `fid:` is a common slip.
enum FIDShapeRule: ManifestRule {
    static let problem =
        "is not a Firebase Installation ID (22 characters of A-Z a-z 0-9 - _, starting with c, d, e or f); use 'token:' for an FCM token"

    static func check(_ context: RuleContext) -> [Diagnostic] {
        var diagnostics: [Diagnostic] = []
        let devices = context.manifest.devices.sortedByName()
        for position in 0..<devices.count {
            guard let registration = devices.registration(at: position), registration.kind == .fid else { continue }
            let value = registration.value
            guard !value.isEmpty, !Registration.looksLikeFID(value) else { continue }
            diagnostics.append(.error("device/\(devices.name(at: position)): '\(value)' \(problem)", at: devices.registrationLocation(at: position)))
        }
        for (address, members) in context.manifest.memberLists {
            for case .explicit(let registration, let location) in members
            where registration.kind == .fid && !registration.value.isEmpty && !Registration.looksLikeFID(registration.value) {
                diagnostics.append(.error("\(address): '\(registration.value)' \(problem)", at: location))
            }
        }
        return diagnostics
    }
}
