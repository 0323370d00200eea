import FCMCore

/// A selector that matches no device is an error, not an empty set: a renamed label column or an export
/// that came out empty would otherwise remove every device from the topic. The message names what no device
/// has (a label, or a label's value) with the closest one devices do have. A topic meant to be empty says
/// `allowEmpty: true`; a label no device carries is then still a warning when a close one exists.
enum SelectorRule: ManifestRule {
    static func check(_ context: RuleContext) -> [Diagnostic] {
        // A selector with no labels is reported by the decoder already.
        let empty = context.manifest.topics.values.filter {
            $0.selector?.labels.isEmpty == false && context.resolution.selectorMatches[$0.name] == 0
        }
        guard !empty.isEmpty else { return [] }
        // Built only when a selector matched nothing: a fleet whose selectors all match pays nothing here.
        var carried: [String: Set<String>] = [:]
        for labels in context.manifest.devices.labelSets {
            for (key, value) in labels { carried[key, default: []].insert(value) }
        }
        return empty.sorted { $0.name < $1.name }.compactMap { topic in diagnostic(topic, carried: carried, devices: context.manifest.devices.count) }
    }

    static func diagnostic(_ topic: ManifestTopic, carried: [String: Set<String>], devices: Int) -> Diagnostic? {
        guard let selector = topic.selector else { return nil }
        let allowed = topic.allowEmpty?.value == true
        let owner = "\(Address.topic(topic.name))"
        let remedy =
            ". Fix the manifest or the device files, or declare the topic `allowEmpty: true` if it is meant to have no members: "
            + "planned as it is, it would remove every device fcmctl subscribed to it"
        guard devices > 0 else {
            if allowed { return nil }
            return .error("\(owner): the selector matches no device: the manifests declare no devices at all" + remedy, at: selector.location)
        }
        for (key, wanted) in selector.labels {
            guard let values = carried[key] else {
                let suggestion = Suggestions.closest(to: key, in: carried.keys.sorted())
                if allowed && suggestion == nil { return nil }
                var message = "\(owner): no device has the label '\(key)'"
                message += suggestion.map { " (did you mean '\($0)'?)" } ?? " (devices have the labels " + listed(carried.keys) + ")"
                return allowed ? .warning(message, at: selector.location) : .error(message + remedy, at: selector.location)
            }
            if allowed { continue }
            if !wanted.contains(where: values.contains) {
                var message = "\(owner): no device has \(key)=\(wanted.joined(separator: "|"))"
                if wanted.count == 1, let match = Suggestions.closest(to: wanted[0], in: values.sorted()) {
                    message += " (did you mean \(key)=\(match)?)"
                } else {
                    message += " (devices have \(key)=" + listed(values) + ")"
                }
                return .error(message + remedy, at: selector.location)
            }
        }
        if allowed { return nil }
        let wanted = selector.labels.map { "\($0.key)=\($0.values.joined(separator: "|"))" }.joined(separator: ", ")
        return .error("\(owner): the selector (\(wanted)) matches no device: no device has all of these labels" + remedy, at: selector.location)
    }

    /// A few of the names, sorted, for a message that must stay one line.
    static func listed(_ names: some Collection<String>) -> String {
        let sorted = names.sorted()
        return sorted.prefix(8).map { "'\($0)'" }.joined(separator: ", ") + (sorted.count > 8 ? " and \(sorted.count - 8) more" : "")
    }
}
