import FCMCore

/// A selector that matches no device is legal but usually a typo in a label.
enum EmptySelectorRule: ManifestRule {
    static func check(_ context: RuleContext) -> [Diagnostic] {
        context.manifest.topics.values.sorted { $0.name < $1.name }.compactMap { topic in
            guard let selector = topic.selector, context.resolution.selectorMatches[topic.name] == 0 else { return nil }
            let wanted = selector.labels.map { "\($0.key)=\($0.values.joined(separator: "|"))" }.joined(separator: ", ")
            return .warning("\(Address.topic(topic.name)): the selector (\(wanted)) matches no device; check the labels", at: selector.location)
        }
    }
}
