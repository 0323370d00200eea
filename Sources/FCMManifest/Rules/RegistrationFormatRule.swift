import FCMCore

/// Only the checks FCM's own docs support: tokens have no published format, so no regex (wire reference §7).
enum RegistrationFormatRule: ManifestRule {
    static func check(_ context: RuleContext) -> [Diagnostic] {
        var diagnostics: [Diagnostic] = []
        let devices = context.manifest.devices.sortedByName()
        for position in 0..<devices.count {
            // Printable ASCII of a sane length has no problem, but for '.' and '..': no String is made for it.
            guard let registration = devices.registration(at: position),
                !registration.isVisibleASCII || registration.utf8Count <= 2,
                let problem = Registration.formatProblem(registration.value)
            else { continue }
            diagnostics.append(.error("device/\(devices.name(at: position)): \(problem)", at: devices.registrationLocation(at: position)))
        }
        for (address, members) in context.manifest.memberLists {
            for member in members {
                let text: String
                switch member {
                case .name(let located): text = located.value
                case .explicit(let registration, _): text = registration.value
                }
                if let problem = Registration.formatProblem(text) { diagnostics.append(.error("\(address): \(problem)", at: member.location)) }
            }
        }
        return diagnostics
    }
}
