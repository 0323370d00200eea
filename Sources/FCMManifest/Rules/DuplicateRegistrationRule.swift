import FCMCore

/// One registration must have one name: two devices with the same registration, or a raw registration
/// written where a device already names it, make reviews lie about which device is which.
enum DuplicateRegistrationRule: ManifestRule {
    static func check(_ context: RuleContext) -> [Diagnostic] {
        var diagnostics: [Diagnostic] = []
        var owner: [String: String] = [:]
        for device in context.manifest.devices.values.sorted(by: { $0.name < $1.name }) {
            guard let registration = device.registration else { continue }
            if let first = owner[registration.value] {
                diagnostics.append(
                    .error("device/\(device.name) has the same registration as device/\(first): keep one of them", at: registration.location))
            } else {
                owner[registration.value] = device.name
            }
        }
        for (address, members) in context.manifest.memberLists {
            for case .name(let located) in members where context.manifest.devices[located.value] == nil {
                if let device = owner[located.value] {
                    diagnostics.append(
                        .error("\(address): this registration is declared as device/\(device); refer to it as '\(device)'", at: located.location))
                }
            }
        }
        return diagnostics
    }
}
