/// How many bytes an apply's journal may need, from the plan itself: a store reserves that much before the
/// first request, so a full disk stops a run before it sends, not in the middle. Long topic names and group
/// steps (each intent lists every member the group holds after it) are why a flat figure per operation was
/// too small.
package enum JournalBudget {
    /// A run header, the `done`/`gone` lines' ids (up to 8 bytes each), and room for escaping: text is counted
    /// twice, so even a name of quotes and backslashes fits.
    static let header = 4096
    static let perIntent = 48
    static let perCompletion = 8

    package static func bytes(for plan: Plan) -> Int {
        var total = header
        for topic in plan.topics {
            for registration in topic.added + topic.removed {
                total += perIntent + perCompletion + 2 * (topic.name.utf8.count + registration.utf8Count)
            }
        }
        for group in plan.groups {
            let longest = (group.added + group.removed).map(\.utf8Count).max() ?? 0
            let members = min(GroupStepPlanner.memberLimit, group.added.count + group.removed.count + group.unchanged)
            let line = perIntent + perCompletion + 2 * group.name.utf8.count + members * (2 * max(longest, 256) + 16)
            total += line * group.steps.count
        }
        return total
    }
}
