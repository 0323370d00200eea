import FCMCore

extension PlanSummary {
    /// The stable summary line: scripts and people grep it, so its wording is a public interface.
    package var line: String {
        "Plan: \(count(groupsToCreate, "group")) to create, \(groupsToDelete) to delete; "
            + "\(count(membersToAdd, "member")) to add, \(membersToRemove) to remove; "
            + "\(count(subscriptionsToAdd, "subscription")) to add, \(subscriptionsToRemove) to remove."
    }

    private func count(_ n: Int, _ noun: String) -> String { n == 1 ? "1 \(noun)" : "\(n) \(noun)s" }
}
