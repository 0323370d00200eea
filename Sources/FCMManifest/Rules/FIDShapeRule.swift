import FCMCore

/// A value declared as a FID must look like one: 22 base64url characters starting with c, d, e or f
/// (firebase-js-sdk `VALID_FID_PATTERN`, wire reference §7). A token pasted under `fid:` is a common slip.
enum FIDShapeRule: ManifestRule {
    static let problem =
        "is not a Firebase Installation ID (22 characters of A-Z a-z 0-9 - _, starting with c, d, e or f); use 'token:' for an FCM token"

    static func check(_ context: RuleContext) -> [Diagnostic] {
        var diagnostics: [Diagnostic] = []
        for device in context.manifest.devices.values.sorted(by: { $0.name < $1.name }) where device.kind == .fid {
            guard let registration = device.registration, !registration.value.isEmpty,
                !Registration.looksLikeFID(registration.value)
            else { continue }
            diagnostics.append(.error("device/\(device.name): '\(registration.value)' \(problem)", at: registration.location))
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
