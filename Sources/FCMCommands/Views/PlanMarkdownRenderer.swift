import FCMCore

/// A plan as a pull-request comment: a hidden marker (so a workflow updates its own comment), the
/// summary table, notices and warnings, then one collapsible section per object, largest first, within
/// the budget.
struct PlanMarkdownRenderer {
    static let marker = "<!-- fcmctl:plan -->"

    let labeler: RegistrationLabeler
    var maxChars = MarkdownBudget.defaultLimit
    var maxMembers = 50
    var title = "fcmctl plan"
    var marker = PlanMarkdownRenderer.marker
    /// A saved plan's digest: what the reviewer approves and the merge job passes to `--expect-digest`.
    var digest: String?

    func render(_ plan: Plan, refresh: RefreshSummary? = nil, extra: [String] = []) -> String {
        let changes = ObjectChange.of(plan)
        var budget = MarkdownBudget(limit: maxChars)
        budget.head(summary(plan, changes: changes, refresh: refresh, extra: extra))
        for change in ObjectChange.largestFirst(changes) {
            budget.add(section(change), changes: change.size)
        }
        return budget.finish(noun: "object", hint: "Run `fcmctl plan` locally, or read the JSON plan, for all of them.")
    }

    func summary(_ plan: Plan, changes: [ObjectChange], refresh: RefreshSummary?, extra: [String]) -> String {
        var text = "\(marker)\n### \(title)\n\n"
        // Only a well-formed digest goes into a code span; it is hex, so nothing in it can close the span.
        if let digest, digest.allSatisfy({ $0.isHexDigit || $0 == ":" || $0.isLetter }) {
            text += "Plan digest: `\(digest)` (the merge job applies it with `--expect-digest \(digest)`)\n\n"
        }
        guard plan.hasChanges else {
            text += "**No changes.** FCM matches the manifest.\n\n"
            return text + notes(plan.notes, extra: extra, refresh: refresh)
        }
        text += Self.table(ActionCounts(changes))
        text += "\n`\(plan.summary.line)`\n\n"
        return text + notes(plan.notes, extra: extra, refresh: refresh)
    }

    static func table(_ counts: ActionCounts) -> String {
        var text = "| Action | Objects | Added | Removed |\n|---|---:|---:|---:|\n"
        for action in ViewAction.allCases where action != .none {
            let row = counts[action]
            text += "| \(action.rawValue) | \(row.objects) | \(row.added) | \(row.removed) |\n"
        }
        return text
    }

    /// Warnings, capped so a thousand of them cannot push the summary over the budget.
    func notes(_ diagnostics: [Diagnostic], extra: [String], refresh: RefreshSummary?) -> String {
        var lines = extra.map { "- \(MarkdownText.inline($0))" }
        if let refresh, refresh.mode != "all" { lines.append("- \(MarkdownText.inline(refresh.line))") }
        let redactor = labeler.redactor
        let shown = diagnostics.prefix(20)
        lines += shown.map { "- **\($0.severity.rawValue)**: \(MarkdownText.inline(SourceExcerptRedaction.redact($0.message, redactor)))" }
        if diagnostics.count > shown.count { lines.append("- … and \(diagnostics.count - shown.count) more warnings") }
        return lines.isEmpty ? "" : lines.joined(separator: "\n") + "\n\n"
    }

    func section(_ change: ObjectChange) -> String {
        let sign =
            switch change.action {
            case .create: "+"
            case .delete: "-"
            case .update, .none: "~"
            }
        var counts = "+\(change.added.count) −\(change.removed.count)"
        if change.action == .update { counts += " (\(change.unchanged) unchanged)" }
        var text = "<details><summary><code>\(sign) \(MarkdownText.html(change.address))</code> \(change.action.rawValue) \(counts)</summary>\n\n"
        for note in change.notes { text += "_\(MarkdownText.inline(note))_\n\n" }
        text += memberFence(change)
        return text + "</details>\n\n"
    }

    func memberFence(_ change: ObjectChange) -> String {
        let total = change.added.count + change.removed.count
        guard total > 0 else { return "" }
        var text = "```diff\n"
        for registration in change.added.prefix(maxMembers) { text += MarkdownText.fenced("+ \(labeler.label(registration))") + "\n" }
        for registration in change.removed.prefix(max(0, maxMembers - change.added.count)) {
            text += MarkdownText.fenced("- \(labeler.label(registration))") + "\n"
        }
        if total > maxMembers { text += "# … and \(total - maxMembers) more\n" }
        return text + "```\n\n"
    }
}
