import FCMCore

/// FCM allows at most 2000 topics per app instance (wire reference §6); more would fail at apply time.
enum TopicsPerRegistrationRule: ManifestRule {
    static let limit = 2000

    static func check(_ context: RuleContext) -> [Diagnostic] {
        let resolution = context.resolution
        // Counted by device position: a million subscriptions cost a million integer increments.
        var perDevice = [UInt32](repeating: 0, count: resolution.devices.count)
        var perRaw: [Registration: Int] = [:]
        for members in resolution.topicMembers.values {
            for position in members.devices { perDevice[Int(position)] += 1 }
            for registration in members.raw { perRaw[registration, default: 0] += 1 }
        }
        var diagnostics: [Diagnostic] = []
        for (position, count) in perDevice.enumerated() where Int(count) > limit {
            let name = resolution.devices.name(at: position)
            diagnostics.append(
                .error(
                    "device/\(name) is declared in \(count) topics; FCM allows at most \(limit) per registration",
                    at: resolution.devices.location(at: position)))
        }
        for (registration, count) in perRaw.sorted(by: { $0.key < $1.key }) where count > limit {
            diagnostics.append(
                .error(
                    "registration \(Redactor(showTokens: false)(registration)) is declared in \(count) topics; FCM allows at most \(limit) per registration"
                ))
        }
        return diagnostics
    }
}
