import FCMCore

/// Only the checks FCM's own docs support: tokens have no published format, so no regex (wire reference §7).
enum RegistrationFormatRule: ManifestRule {
    static func check(_ context: RuleContext) -> [Diagnostic] {
        var diagnostics: [Diagnostic] = []
        for device in context.manifest.devices.values.sorted(by: { $0.name < $1.name }) {
            guard let registration = device.registration, let problem = Registration.formatProblem(registration.value) else { continue }
            diagnostics.append(.error("device/\(device.name): \(problem)", at: registration.location))
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
