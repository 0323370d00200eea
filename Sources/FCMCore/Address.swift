/// The address of an object fcmctl manages, as people type it and every output prints it: `group/NAME`,
/// `topic/NAME`, or `topic/NAME/REGISTRATION` (a registration, or a device's name, subscribed to the topic).
/// The one place that spells the prefixes: everything else prints and parses through this type.
package enum Address: Hashable, Sendable, Comparable, CustomStringConvertible {
    case group(String)
    case topic(String)
    case subscription(topic: String, registration: String)

    package var isSubscription: Bool {
        if case .subscription = self { return true }
        return false
    }

    private static let groupPrefix = "group/"
    private static let topicPrefix = "topic/"

    /// A group's name may hold a slash; a topic's may not (FCM's topic names are `[a-zA-Z0-9-_.~%]+`), so the
    /// first slash after a topic's name starts the registration.
    package init?(_ text: String) {
        if text.hasPrefix(Self.groupPrefix) {
            let name = String(text.dropFirst(Self.groupPrefix.count))
            guard !name.isEmpty else { return nil }
            self = .group(name)
            return
        }
        guard text.hasPrefix(Self.topicPrefix) else { return nil }
        let rest = text.dropFirst(Self.topicPrefix.count)
        guard let slash = rest.firstIndex(of: "/") else {
            guard !rest.isEmpty else { return nil }
            self = .topic(String(rest))
            return
        }
        let topic = String(rest[..<slash])
        let registration = String(rest[rest.index(after: slash)...])
        guard !topic.isEmpty, !registration.isEmpty else { return nil }
        self = .subscription(topic: topic, registration: registration)
    }

    package var description: String {
        switch self {
        case .group(let name): Self.groupPrefix + name
        case .topic(let name): Self.topicPrefix + name
        case .subscription(let topic, let registration): Self.topicPrefix + topic + "/" + registration
        }
    }

    /// What a person types, for an error that names the accepted forms.
    package static let forms =
        "\(Address.group("NAME")), \(Address.topic("NAME")) or \(Address.subscription(topic: "NAME", registration: "REGISTRATION"))"

    /// The group's or topic's name this address is about.
    package var name: String {
        switch self {
        case .group(let name), .topic(let name): name
        case .subscription(let topic, _): topic
        }
    }

    package var isGroup: Bool {
        if case .group = self { return true }
        return false
    }

    package static func < (lhs: Address, rhs: Address) -> Bool { lhs.description < rhs.description }
}
