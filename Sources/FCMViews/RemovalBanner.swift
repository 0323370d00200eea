import FCMCore

/// The top of a plan comment when the plan deletes or removes anything: the counts and one line per object,
/// before the summary table and before any section, so no number of additions can push a removal out of
/// the first screen or behind the budget. A GitHub alert; other renderers show a block quote.
package struct RemovalBanner {
    package let labeler: RegistrationLabeler
    /// Most characters the banner may take: a share of the comment's budget, whatever the plan holds.
    package var maxChars = 15_000
    /// Registrations named per object line; the section below lists up to `--max-members`.
    package var namesPerObject = 3

    /// Empty when the plan removes nothing. `removing` as `ObjectChange.removalsFirst` orders it.
    package func render(_ removing: [ObjectChange], summary: PlanSummary) -> String {
        guard !removing.isEmpty else { return "" }
        var counts: [String] = []
        if summary.groupsToDelete > 0 { counts.append(plural(summary.groupsToDelete, "group") + " deleted") }
        if summary.membersToRemove > 0 { counts.append(plural(summary.membersToRemove, "group member") + " removed") }
        if summary.subscriptionsToRemove > 0 { counts.append(plural(summary.subscriptionsToRemove, "topic subscription") + " removed") }
        var text = "> [!CAUTION]\n> **This plan deletes or removes:** \(counts.joined(separator: ", ")). Listed first below.\n>\n"
        // Why, counted: "38 × the device has no label role any more" is what tells a renamed column from a clean-up.
        let causes = ObjectChange.causeCounts(removing)
        if !causes.isEmpty {
            text += "> **Why:**\n"
            for (summary, count) in causes.prefix(8) { text += "> - **\(count)** × \(MarkdownText.inline(summary))\n" }
            if causes.count > 8 { text += "> - … and \(causes.count - 8) more causes: in the sections below\n" }
            text += ">\n"
        }
        var length = MarkdownBudget.size(text)
        for (index, change) in removing.enumerated() {
            let line = "> - \(self.line(change))\n"
            // The last line must still fit: it says how many more objects the sections and the JSON hold.
            if length + MarkdownBudget.size(line) + 200 > maxChars {
                text += "> - … and \(removing.count - index) more objects with deletions or removals: in the sections below as the budget "
                text += "allows, and every one in `--format json`\n"
                break
            }
            text += line
            length += MarkdownBudget.size(line)
        }
        return text + "\n"
    }

    package func line(_ change: ObjectChange) -> String {
        var text = MarkdownText.code(change.address.description) + ": "
        if change.action == .delete {
            text += "**delete** the group and its notification key (\(plural(change.removed.count, "member")))"
        } else {
            let noun = change.type == "group" ? "member" : "subscription"
            text += "**remove** \(plural(change.removed.count, noun))"
            if let ownership = change.ownership, change.type == "topic" { text += " (\(ownership.rawValue))" }
        }
        let named = change.removed.prefix(namesPerObject).map { MarkdownText.inline(labeler.label($0)) }
        if !named.isEmpty {
            text += ": " + named.joined(separator: ", ") + (change.removed.count > named.count ? ", …" : "")
        }
        if !change.added.isEmpty { text += "; also adds \(change.added.count)" }
        return text
    }
}
