/// A device group as FCM reports it. The key is only good for the next request: FCM returns a different
/// valid string on every read, so it is never compared (wire reference §0.6).
///
/// FCM documents no way to list a group's members (wire reference §3), so `members` is what fcmctl last
/// recorded, the only writer of the groups it manages, unless an operator enabled a member export probe
/// that answered: `membersFromFCM` says which.
package struct ObservedGroup: Hashable, Sendable {
    package var name: String
    package var notificationKey: String
    package var members: Set<Registration>
    package var membersFromFCM: Bool

    package init(name: String, notificationKey: String, members: Set<Registration>, membersFromFCM: Bool = true) {
        self.name = name
        self.notificationKey = notificationKey
        self.members = members
        self.membersFromFCM = membersFromFCM
    }
}

/// What FCM said about one registration's subscriptions.
package enum RegistrationStatus: Hashable, Sendable {
    case active(topics: Set<String>)
    /// FCM no longer knows it (uninstalled, expired, or invalid for this sender): normal drift, not a failure.
    case gone(reason: String)
}

/// The live state fcmctl could see. FCM cannot list a topic's subscribers, so this only covers the
/// registrations and groups fcmctl knows from its manifests and its own state.
package struct ObservedState: Hashable, Sendable {
    package var groups: [String: ObservedGroup]
    package var registrations: [Registration: RegistrationStatus]
    /// Group names that were looked up (found or not); nil means every group fcmctl knows was.
    package var checkedGroups: Set<String>?
    /// Registrations FCM would not tell about (an error after every retry), with the reason. Nothing that
    /// depends on them is planned; their records are kept.
    package var unreadable: [Registration: String] = [:]

    package init(
        groups: [String: ObservedGroup] = [:], registrations: [Registration: RegistrationStatus] = [:], checkedGroups: Set<String>? = nil
    ) {
        self.groups = groups
        self.registrations = registrations
        self.checkedGroups = checkedGroups
    }

    /// Groups FCM would not list the members of take the members the state records (or, for a group whose
    /// create went unanswered, every member it may hold); a group the state does not know keeps none and stays
    /// marked, so nothing is planned from a guess.
    package mutating func fillUnreadMembers(from ledger: Ledger) {
        for (name, group) in groups where !group.membersFromFCM {
            groups[name]?.members = ledger.groups[name]?.members ?? ledger.pending.groupMembers[name] ?? []
        }
    }

    /// Names of the groups whose members FCM did not tell, sorted.
    package var groupsWithRecordedMembers: [String] { groups.values.filter { !$0.membersFromFCM }.map(\.name).sorted() }

    package func wasChecked(group name: String) -> Bool { checkedGroups?.contains(name) ?? true }

    package func isSubscribed(_ registration: Registration, to topic: String) -> Bool {
        if case .active(let topics) = registrations[registration] { return topics.contains(topic) }
        return false
    }

    package func isUnreadable(_ registration: Registration) -> Bool { unreadable[registration] != nil }

    package func isGone(_ registration: Registration) -> Bool {
        if case .gone = registrations[registration] { return true }
        return false
    }
}
