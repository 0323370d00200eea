import FCMCore

/// What one refresh reads, and the part of the manifest a plan may be made from with what it read.
package struct RefreshScope {
    package let mode: RefreshMode
    package let groups: Set<String>
    package private(set) var registrations: Set<Registration>
    /// Registrations in scope that this run subscribes without reading them first (`UnreadCreates`).
    package private(set) var unread: Set<Registration> = []
    /// The manifest restricted to what was read: with `changed`, registrations not read are assumed to be as
    /// the last apply left them, so nothing is planned for them.
    package let plannedDesired: DesiredState
    package let knownRegistrations: Int
    package let knownGroups: Int

    package init(desired: DesiredState, ledger: Ledger, mode: RefreshMode, includeLocalGroups: Bool = false) {
        self.mode = mode
        var everyone = ledger.subscribedRegistrations
        for topic in desired.topics.values { everyone.formUnion(topic.members) }
        // drift reads the members of local groups too, to report the dead ones.
        if includeLocalGroups { for group in desired.localGroups.values { everyone.formUnion(group.members) } }
        // A device group's new members are read once before they are added: FCM lists no group's members, and
        // drops a registration it does not know from an add without a word, so this read is the only check
        // that a new member (a rotated token, say) is one FCM knows. Members fcmctl recorded are not read again.
        let newGroupMembers = Self.newGroupMembers(desired, ledger)
        everyone.formUnion(newGroupMembers)
        let allGroups = ledger.knownGroupNames.union(desired.groups.keys)
        knownRegistrations = everyone.count
        knownGroups = allGroups.count
        guard mode == .changed else {
            groups = allGroups
            registrations = everyone
            plannedDesired = desired
            return
        }
        var changed = ledger.applied.changedRegistrations(in: desired).union(newGroupMembers)
        // Recorded subscriptions the manifest no longer declares, and what an interrupted run may have done.
        for (topic, members) in ledger.topics {
            let declared = desired.topics[topic]?.members ?? []
            for member in members where !declared.contains(member) { changed.insert(member) }
        }
        for members in ledger.pending.subscriptions.values { changed.formUnion(members) }
        var changedGroups = ledger.applied.changedGroups(in: desired).union(ledger.pending.groups)
        changedGroups.formUnion(ledger.groups.keys.filter { desired.groups[$0] == nil })
        groups = changedGroups
        registrations = changed
        var restricted = desired
        restricted.groups = desired.groups.filter { changedGroups.contains($0.key) }
        for (name, topic) in desired.topics {
            restricted.topics[name]?.members = Set(changed.filter { topic.members.contains($0) })
        }
        plannedDesired = restricted
    }

    /// Members the manifests give FCM groups that no group in the state records.
    static func newGroupMembers(_ desired: DesiredState, _ ledger: Ledger) -> Set<Registration> {
        guard !desired.groups.isEmpty else { return [] }
        var recorded = Set<Registration>()
        for group in ledger.groups.values { recorded.formUnion(group.members) }
        for members in ledger.pending.groupMembers.values { recorded.formUnion(members) }
        var new = Set<Registration>()
        for group in desired.groups.values { new.formUnion(group.members.subtracting(recorded)) }
        return new
    }

    /// Leaves `skipped` out of the reads; they stay in what may be planned, as registrations FCM said nothing of.
    package mutating func leaveUnread(_ skipped: Set<Registration>) {
        unread = registrations.intersection(skipped)
        registrations.subtract(unread)
    }

    package var summary: RefreshSummary {
        RefreshSummary(
            mode: mode.rawValue, registrationsRead: registrations.count, registrationsKnown: knownRegistrations, groupsRead: groups.count,
            groupsKnown: knownGroups)
    }
}
