import FCMCore

/// A plan as a pull-request comment: a hidden marker (so a workflow updates its own comment), the title with
/// the project, a banner naming whatever the plan deletes or removes, the summary table, notices and
/// warnings, then one collapsible section per object within the budget: first every object with deletions
/// or removals, then the rest, largest first.
package struct PlanMarkdownRenderer {
    package static let marker = "<!-- fcmctl:plan -->"

    package let labeler: RegistrationLabeler
    package var maxChars = MarkdownBudget.defaultLimit
    package var maxMembers = 50
    package var title = "fcmctl plan"
    package var marker = PlanMarkdownRenderer.marker
    /// The Firebase project the plan is for, in the title: comments of several environments look alike.
    package var project: String?
    /// A saved plan's digest: what the reviewer approves and the merge job passes to `--expect-digest`.
    package var digest: String?

    /// False when topics were read in part (`--refresh=changed`): their unchanged counts are not known.
    package var unchangedRead = true
    /// With this many objects that delete or remove, or fewer, their sections start open.
    package var openRemovalSections = 5

    package init(
        labeler: RegistrationLabeler, maxChars: Int = MarkdownBudget.defaultLimit, maxMembers: Int = 50, title: String = "fcmctl plan",
        marker: String = PlanMarkdownRenderer.marker, project: String? = nil, digest: String? = nil, unchangedRead: Bool = true
    ) {
        self.labeler = labeler
        self.maxChars = maxChars
        self.maxMembers = maxMembers
        self.title = title
        self.marker = marker
        self.project = project
        self.digest = digest
        self.unchangedRead = unchangedRead
    }

    package func render(_ plan: Plan, refresh: RefreshSummary? = nil, extra: [String] = []) -> String {
        let changes = ObjectChange.of(plan, unchangedRead: unchangedRead && (refresh?.unchangedRead ?? true))
        let (removing, rest) = ObjectChange.removalsFirst(changes)
        var budget = MarkdownBudget(limit: maxChars)
        budget.head(summary(plan, changes: changes, removing: removing, refresh: refresh, extra: extra))
        // Each heading rides on the first section under it, so a heading never stands alone over nothing.
        var heading = rest.isEmpty ? "" : "#### Deletions and removals\n\n"
        for change in removing {
            let open = removing.count <= openRemovalSections
            if budget.add(heading + section(change, open: open), changes: change.size, removes: true) { heading = "" }
        }
        heading = removing.isEmpty ? "" : "#### Other changes\n\n"
        for change in rest {
            if budget.add(heading + section(change), changes: change.size) { heading = "" }
        }
        return budget.finish(noun: "object", hint: "Run `fcmctl plan` locally, or read the JSON plan, for all of them.")
    }

    package func summary(_ plan: Plan, changes: [ObjectChange], removing: [ObjectChange], refresh: RefreshSummary?, extra: [String]) -> String {
        var text = "\(marker)\n### \(MarkdownText.inline(title))"
        if let project { text += " · project \(MarkdownText.code(project))" }
        text += "\n\n"
        text += refusalBanner(plan)
        // A quarter of the budget at most, so the table and the sections keep room at any --max-chars.
        text += RemovalBanner(labeler: labeler, maxChars: maxChars / 4).render(removing, summary: plan.summary)
        // Only a well-formed digest goes into a code span; it is hex, so nothing in it can close the span.
        if let digest, digest.allSatisfy({ $0.isHexDigit || $0 == ":" || $0.isLetter }) {
            text += "Plan digest: `\(digest)` (the merge job applies it with `--expect-digest \(digest)`)\n\n"
        }
        guard plan.hasChanges else {
            text += plan.inSync ? "**No changes.** FCM matches the manifest.\n\n" : "**\(MarkdownText.inline(plan.noChangeLine))**\n\n"
            return text + notes(plan.notes, extra: extra, refresh: refresh)
        }
        text += Self.table(ActionCounts(changes))
        text += "\n`\(plan.summary.line)`\n\n"
        return text + notes(plan.notes, extra: extra, refresh: refresh)
    }

    /// A refused plan: the reasons first, each of its registrations with its place, then the plan as it is.
    func refusalBanner(_ plan: Plan) -> String {
        guard !plan.refusals.isEmpty else { return "" }
        let redactor = labeler.redactor
        var text = "> [!CAUTION]\n> **This plan is refused: nothing will be applied.** Below is what it would have done.\n>\n"
        for refusal in plan.refusals { text += "> - \(MarkdownText.inline(refusal.headline(redactor)))\n" }
        let placed = plan.refusalDiagnostics(redactor).filter { $0.location != nil }
        for diagnostic in placed.prefix(20) {
            let place = diagnostic.location.map { MarkdownText.code("\($0.file):\($0.line):\($0.column)") + " " } ?? ""
            text += ">   - \(place)\(MarkdownText.inline(diagnostic.message))\n"
        }
        if placed.count > 20 { text += ">   - … and \(placed.count - 20) more\n" }
        return text + "\n"
    }

    package static func table(_ counts: ActionCounts) -> String {
        var text = "| Action | Objects | Added | Removed |\n|---|---:|---:|---:|\n"
        for action in ChangeAction.allCases where action != .none {
            let row = counts[action]
            text += "| \(action.rawValue) | \(row.objects) | \(row.added) | \(row.removed) |\n"
        }
        return text
    }

    /// Warnings, capped so a thousand of them cannot push the summary over the budget.
    package func notes(_ diagnostics: [Diagnostic], extra: [String], refresh: RefreshSummary?) -> String {
        var lines = extra.map { "- \(MarkdownText.inline($0))" }
        if let refresh, refresh.mode != "all" { lines.append("- \(MarkdownText.inline(refresh.line))") }
        let redactor = labeler.redactor
        let shown = diagnostics.prefix(20)
        lines += shown.map { "- **\($0.severity.rawValue)**: \(MarkdownText.inline(SourceExcerptRedaction.redact($0.message, redactor)))" }
        if diagnostics.count > shown.count { lines.append("- … and \(diagnostics.count - shown.count) more warnings") }
        return lines.isEmpty ? "" : lines.joined(separator: "\n") + "\n\n"
    }

    func section(_ change: ObjectChange, open: Bool = false) -> String {
        let sign =
            switch change.action {
            case .create: "+"
            case .delete: "-"
            case .update, .none: "~"
            }
        var counts = "+\(change.added.count) −\(change.removed.count)"
        if change.action == .update { counts += change.unchanged.map { " (\($0) unchanged)" } ?? " (unchanged: not read)" }
        var text = "<details\(open ? " open" : "")><summary><code>\(sign) \(MarkdownText.html(change.address.description))</code> "
        text += "\(change.action.rawValue) \(counts)</summary>\n\n"
        for note in change.notes { text += "_\(MarkdownText.inline(note))_\n\n" }
        text += memberFence(change)
        return text + "</details>\n\n"
    }

    /// Removals first: with more members than `maxMembers`, what is cut is additions.
    package func memberFence(_ change: ObjectChange) -> String {
        let total = change.added.count + change.removed.count
        guard total > 0 else { return "" }
        var lines = change.removed.prefix(maxMembers).enumerated().map { index, registration in
            "- \(labeler.label(registration))" + (change.cause(at: index).map { "  (\($0.reason(in: change.type)))" } ?? "")
        }
        lines += change.added.prefix(max(0, maxMembers - change.removed.count)).map { "+ \(labeler.label($0))" }
        if total > maxMembers { lines.append("# … and \(total - maxMembers) more") }
        return MarkdownText.fencedBlock(lines, info: "diff") + "\n"
    }
}
