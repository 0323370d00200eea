import FCMCore

/// `--max-removals N`: an apply that would remove more than N subscriptions or group members is refused
/// before anything is sent. Renaming a topic by mistake should not silently unsubscribe a fleet.
package enum RemovalLimit {
    package static func check(_ plan: Plan, limit: Int?) throws {
        guard let limit else { return }
        let removals = plan.summary.membersToRemove + plan.summary.subscriptionsToRemove
        guard removals > limit else { return }
        var largest: [(String, Int)] = plan.groups.map { ($0.address, $0.removed.count) } + plan.topics.map { ($0.address, $0.removed.count) }
        largest = largest.filter { $0.1 > 0 }.sorted { $0.1 != $1.1 ? $0.1 > $1.1 : $0.0 < $1.0 }
        let shown = largest.prefix(5).map { "\($0.0) (−\($0.1))" }.joined(separator: ", ")
        throw EngineFailure(
            "the plan removes \(removals) subscriptions and group members, more than --max-removals \(limit): \(shown)"
                + (largest.count > 5 ? " and \(largest.count - 5) more objects" : "")
                + ". Nothing was sent. If this is intended, raise --max-removals")
    }
}
