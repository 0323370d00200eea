import FCMCore

extension Manifest {
    /// The declared topic a plan calls `name` (a leading `/topics/` is stripped when planning).
    package func topic(planned name: String) -> ManifestTopic? {
        topics[name] ?? topics.values.first { TopicNameRule.normalized($0.name) == name }
    }

    /// Why the declared device `device` is not a member of `topic`: listed under `exclude`, or it fails the
    /// selector (the first label, in the selector's order, it does not have the wanted value of), or, when
    /// neither, it is not listed.
    package func whyNotMember(device: String, of topic: ManifestTopic) -> RemovalCause {
        if topic.exclude.contains(where: { $0.names(device) }) { return .excluded(device: device) }
        if let selector = topic.selector, let labels = devices[device]?.labels {
            for (key, wanted) in selector.labels where !wanted.contains(labels[key] ?? "\u{0}") {
                return .labelMismatch(device: device, label: key, wanted: wanted, value: labels[key])
            }
        }
        return .memberDropped(device: device)
    }

    /// Whether a raw registration is listed under the topic's `exclude`.
    package func excludes(_ registration: Registration, from topic: ManifestTopic) -> Bool {
        topic.exclude.contains {
            switch $0 {
            case .name(let located): located.value == registration.value
            case .explicit(let listed, _): listed.value == registration.value
            }
        }
    }
}

extension MemberReference {
    func names(_ device: String) -> Bool {
        if case .name(let located) = self { return located.value == device }
        return false
    }
}
