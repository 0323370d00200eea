extension Ledger {
    /// The ledger corrected by what FCM reported: records of subscriptions or groups that vanished on
    /// their own are dropped (drift nobody caused), and declared groups that already exist are adopted.
    /// Registrations that were not refreshed keep their records.
    package func aligned(with observed: ObservedState, desired: DesiredState) -> Ledger {
        var result = self
        for (topic, members) in topics {
            let kept = members.filter { member in
                guard let status = observed.registrations[member.registration] else { return true }
                if case .active(let subscribed) = status { return subscribed.contains(topic) }
                return false
            }
            result.topics[topic] = kept.isEmpty ? nil : kept
        }
        for name in Set(groups.keys).union(desired.groups.keys) {
            if let group = observed.groups[name] {
                result.recordGroup(name, members: group.members)
            } else {
                result.groups[name] = nil
            }
        }
        result.recordProtection(from: desired)
        return result
    }
}
