import FCMCore

/// FCM allows at most 2000 topics per app instance (wire reference §6); more would fail at apply time.
enum TopicsPerRegistrationRule: ManifestRule {
    static let limit = 2000

    static func check(_ context: RuleContext) -> [Diagnostic] {
        var counts: [Registration: Int] = [:]
        for members in context.resolution.topicMembers.values {
            for registration in members { counts[registration, default: 0] += 1 }
        }
        let names = Dictionary(context.resolution.devices.map { ($0.value, $0.key) }, uniquingKeysWith: min)
        return counts.filter { $0.value > limit }.sorted { $0.key < $1.key }.map { registration, count in
            let name = names[registration].map { "device/\($0)" } ?? "registration \(Redactor(showTokens: false)(registration))"
            let location = names[registration].flatMap { context.manifest.devices[$0]?.location }
            return .error("\(name) is declared in \(count) topics; FCM allows at most \(limit) per registration", at: location)
        }
    }
}
