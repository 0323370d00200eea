/// Where a group lives: FCM's device-group API, or only in the manifest (fcmctl fans a message out to its
/// members), which outlives FCM's groups.
package enum GroupMode: String, Sendable, CaseIterable {
    case fcm
    case local
}

/// Who may remove which subscriptions of a topic (product.md, "Ownership").
package enum Ownership: String, Sendable, CaseIterable, Codable {
    /// Ensure declared subscriptions; remove only those fcmctl created itself.
    case additive
    /// Also remove subscriptions held by any known registration that is not declared.
    case authoritative
    /// Never change; report differences only.
    case observe
}

package enum TopicAPI: String, Sendable, CaseIterable {
    /// The v1 Topic Subscription API: one request per change (the default and the future).
    case v1
    /// The legacy Instance ID batch API: up to 1000 registrations per request; turned down 2027-09-29.
    case iid
}

package struct ProjectSettings: Hashable, Sendable {
    package var id: String
    package var senderId: String
    package var topicAPI: TopicAPI

    package init(id: String, senderId: String, topicAPI: TopicAPI = .v1) {
        self.id = id
        self.senderId = senderId
        self.topicAPI = topicAPI
    }
}

package struct DesiredGroup: Hashable, Sendable {
    package var name: String
    package var members: Set<Registration>
    package var protect: Bool
    package var location: SourceLocation?

    package init(name: String, members: Set<Registration>, protect: Bool = false, location: SourceLocation? = nil) {
        self.name = name
        self.members = members
        self.protect = protect
        self.location = location
    }
}

package struct DesiredTopic: Hashable, Sendable {
    package var name: String
    package var members: Set<Registration>
    package var ownership: Ownership
    package var protect: Bool
    package var location: SourceLocation?

    package init(
        name: String, members: Set<Registration>, ownership: Ownership = .additive, protect: Bool = false,
        location: SourceLocation? = nil
    ) {
        self.name = name
        self.members = members
        self.ownership = ownership
        self.protect = protect
        self.location = location
    }
}

/// What the manifests ask for, fully resolved to registrations.
package struct DesiredState: Hashable, Sendable {
    package var project: ProjectSettings
    package var groups: [String: DesiredGroup]
    package var topics: [String: DesiredTopic]
    /// Device names from the manifest's registry, so output can say which device a registration is.
    package var deviceNames: [Registration: String]
    /// Groups kept only in the manifest (`mode: local`): never sent to the device-group API.
    package var localGroups: [String: DesiredGroup] = [:]
    /// `deviceNames` is not filled in yet: a `plan --refresh=changed` names only the registrations of the shards
    /// it reads (ten million names are 300 MB), from the manifest (`Manifest.deviceNames(where:)`).
    package var namesDeferred = false

    package init(
        project: ProjectSettings, groups: [String: DesiredGroup] = [:], topics: [String: DesiredTopic] = [:],
        deviceNames: [Registration: String] = [:]
    ) {
        self.project = project
        self.groups = groups
        self.topics = topics
        self.deviceNames = deviceNames
    }

    package var isEmpty: Bool { groups.isEmpty && topics.isEmpty && localGroups.isEmpty }
}
