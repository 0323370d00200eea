import FCMCore

/// `--max-removals N`: an apply that would remove more than N subscriptions or group members is refused
/// before anything is sent. Renaming a topic by mistake should not silently unsubscribe a fleet.
package enum RemovalLimit {
    package static func refusal(_ plan: Plan, limit: Int?) -> PlanRefusal? {
        guard let limit else { return nil }
        let removals = plan.summary.membersToRemove + plan.summary.subscriptionsToRemove
        guard removals > limit else { return nil }
        let largest =
            (plan.groups.map { ObjectRemovals(address: .group($0.name), count: $0.removed.count) }
            + plan.topics.map { ObjectRemovals(address: .topic($0.name), count: $0.removed.count) })
            .filter { $0.count > 0 }.sorted { $0.count != $1.count ? $0.count > $1.count : $0.address < $1.address }
        return .tooManyRemovals(removals: removals, limit: limit, largest: largest)
    }
}
