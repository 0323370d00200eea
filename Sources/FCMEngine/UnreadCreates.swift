import FCMCore

/// Registrations an apply may subscribe without reading them from FCM first, because FCM's answer to the
/// create says what the read would: 200, subscribed now by this run (recorded); 409, already subscribed by
/// someone else (held, not recorded: `SubscriptionOutcome.alreadyExists`); 404/400, FCM does not know it
/// (the create fails, naming the device). Only on the v1 API, whose create answers 409, and only where
/// nothing that removes data depends on the read. `plan`, the check a pull request runs, reads them all.
package enum UnreadCreates {
    /// `apply` without a saved plan: the registrations fcmctl has never seen (see `KnownRegistrations`), declared
    /// only in `additive` topics and in no group; none at all unless the records name nothing the run could
    /// remove (no recorded subscription the manifests no longer declare, no pending change, no authoritative
    /// topic, no group whose members the records do not already match). A rotation always leaves its old
    /// token's subscriptions undeclared, so a rotating run reads everything and keeps `plan`'s refusal of a bad
    /// new token before anything is sent.
    package static func forApply(desired: DesiredState, ledger: Ledger, candidates: Set<Registration>) -> Set<Registration> {
        guard desired.project.topicAPI == .v1, ledger.pending.isEmpty, ledger.pending.groupMembers.isEmpty else { return [] }
        guard !desired.topics.values.contains(where: { $0.ownership == .authoritative }) else { return [] }
        for (topic, members) in ledger.topics {
            guard let declared = desired.topics[topic]?.members, members.isSubset(of: declared) else { return [] }
        }
        guard Set(ledger.groups.keys) == Set(desired.groups.keys) else { return [] }
        for (name, group) in desired.groups where ledger.groups[name]?.members != group.members { return [] }
        var read = Set<Registration>()
        for group in desired.groups.values { read.formUnion(group.members) }
        for topic in desired.topics.values where topic.ownership != .additive { read.formUnion(topic.members) }
        let known = KnownRegistrations(ledger)
        return candidates.filter { !read.contains($0) && !known.contains($0) }
    }

    /// `apply FILE`: the registrations the reviewed plan only subscribes, in `additive` topics, where the state
    /// records no subscription of theirs (done or pending) in that topic. The plan read them when it was made;
    /// reading them again before sending would only find someone else's subscription made since, which the
    /// create's 409 says as well.
    package static func forSavedPlan(_ plan: Plan, ledger: Ledger, topicAPI: TopicAPI) -> Set<Registration> {
        guard topicAPI == .v1 else { return [] }
        var creates = Set<Registration>()
        var read = Set<Registration>()
        for topic in plan.topics {
            read.formUnion(topic.removed)
            let recorded = ledger.topics[topic.name] ?? []
            let pending = ledger.pending.subscriptions[topic.name] ?? []
            for registration in topic.added {
                if topic.ownership == .additive && !recorded.contains(registration) && !pending.contains(registration) {
                    creates.insert(registration)
                } else {
                    read.insert(registration)
                }
            }
        }
        return creates.subtracting(read)
    }
}

/// Registrations fcmctl has seen: in its records (a topic, a group, a pending change), named as a device by
/// the last apply, or declared by it. One it has not is checked by `plan` before anything is sent
/// (`IntroducedRegistrations`).
package struct KnownRegistrations {
    let ledger: Ledger
    let subscribed: Set<Registration>
    let inGroups: Set<Registration>

    package init(_ ledger: Ledger) {
        self.ledger = ledger
        subscribed = ledger.subscribedRegistrations
        var inGroups = Set<Registration>()
        for group in ledger.groups.values { inGroups.formUnion(group.members) }
        for members in ledger.pending.groupMembers.values { inGroups.formUnion(members) }
        self.inGroups = inGroups
    }

    package func contains(_ registration: Registration) -> Bool {
        ledger.deviceNames[registration] != nil || ledger.applied.declares(registration) || subscribed.contains(registration)
            || inGroups.contains(registration)
    }
}
