extension Ledger {
    /// The ledger corrected by what FCM reported: records of subscriptions or groups that vanished on
    /// their own are dropped (drift nobody caused), pending changes that FCM shows are recorded as
    /// fcmctl's and the others forgotten. A declared group that exists in FCM but that fcmctl never recorded
    /// is adopted only with `adoptExisting` (`--adopt-existing`); otherwise the plan names it and leaves it.
    /// Registrations that were not refreshed keep their records and their pending changes.
    package func aligned(with observed: ObservedState, desired: DesiredState, adoptExisting: Bool = false) -> Ledger {
        var result = self
        for (topic, members) in topics {
            let kept = members.filter { member in
                guard let status = observed.registrations[member] else { return true }
                if case .active(let subscribed) = status { return subscribed.contains(topic) }
                return false
            }
            result.topics[topic] = kept.isEmpty ? nil : kept
        }
        for (topic, members) in pending.subscriptions {
            for member in members {
                guard let status = observed.registrations[member] else { continue }
                if case .active(let subscribed) = status, subscribed.contains(topic) {
                    result.recordSubscription(member, topic: topic)
                } else {
                    result.pending.forgetSubscription(member, topic: topic)
                }
            }
        }
        for name in knownGroupNames.union(desired.groups.keys) where observed.wasChecked(group: name) {
            if let group = observed.groups[name] {
                let known = groups[name] != nil || pending.groups.contains(name)
                if group.membersFromFCM {
                    if known || adoptExisting { result.recordGroup(name, members: group.members) }
                } else if let recorded = groups[name] {
                    // FCM does not list members: the record stands, and a step in flight is planned again
                    // (adding a member twice or removing an absent one changes nothing).
                    result.recordGroup(name, members: recorded.members)
                } else if pending.groups.contains(name) {
                    // Only a create (or an adoption's adds) leaves a pending group without a record, and FCM has the
                    // group: it was made, from what that step sent.
                    let sent = pending.groupMembers[name] ?? desired.groups[name]?.members ?? []
                    result.recordGroup(name, members: sent)
                }
            } else {
                result.groups[name] = nil
                result.pending.forgetGroup(name)
            }
        }
        result.recordProtection(from: desired)
        return result
    }
}
