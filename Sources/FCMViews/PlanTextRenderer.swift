import FCMCore

/// The human view of a plan: one block per changed object with its membership diff, then the stable
/// summary line. Objects and members are sorted so two runs print the same text.
package struct PlanTextRenderer {
    package let labeler: RegistrationLabeler

    package var membersShownPerObject = 50
    package var palette = Palette.plain
    /// False when topics were read in part (`--refresh=changed`): "(unchanged: not read)", not a false 0.
    package var unchangedRead = true

    package init(
        redactor: Redactor, deviceNames: [Registration: String] = [:], maxMembers: Int = 50, palette: Palette = .plain, unchangedRead: Bool = true
    ) {
        labeler = RegistrationLabeler(redactor: redactor, deviceNames: deviceNames)
        membersShownPerObject = maxMembers
        self.palette = palette
        self.unchangedRead = unchangedRead
    }

    package func render(_ plan: Plan) -> [String] {
        var lines = refusalBanner(plan)
        guard plan.hasChanges else {
            lines.append(plan.noChangeLine)
            return lines
        }
        for change in ObjectChange.of(plan, unchangedRead: unchangedRead) {
            switch (change.type, change.action) {
            case ("group", .create): lines.append(palette.green("+ \(change.address)") + "  create with \(plural(change.added.count, "member"))")
            case ("group", .delete):
                lines.append(palette.red("- \(change.address)") + "  delete (remove its \(plural(change.removed.count, "member")))")
            default:
                let unchanged = change.unchanged.map { "\($0) unchanged" } ?? "unchanged: not read"
                lines.append(palette.yellow("~ \(change.address)") + "  +\(change.added.count) −\(change.removed.count) (\(unchanged))")
            }
            lines += memberLines(added: change.added, removed: change.removed, causes: change.causes, type: change.type)
        }
        lines.append("")
        lines.append(plan.summary.line)
        return lines
    }

    /// A refused plan says so before anything else, and still shows what it would have done.
    func refusalBanner(_ plan: Plan) -> [String] {
        guard !plan.refusals.isEmpty else { return [] }
        return [palette.red("Refused: this plan will not be applied, and nothing was sent.")]
            + plan.refusals.map { "  - \($0.headline(labeler.redactor))" } + ["The plan it refused:", ""]
    }

    /// Warnings about the plan (drift fcmctl will not act on): diagnostics, so they go to stderr.
    package static func printNotes(_ plan: Plan) {
        for note in plan.notes { Console.current.say(Notice(note)) }
    }

    /// Removals first: with more members than `--max-members`, additions are cut before any removal is.
    package func memberLines(added: [Registration], removed: [Registration], causes: [RemovalCause?] = [], type: String = "topic") -> [String] {
        let total = added.count + removed.count
        var lines = removed.prefix(membersShownPerObject).enumerated().map { index, registration in
            let why = index < causes.count ? causes[index].map { "  (\($0.reason(in: type)))" } ?? "" : ""
            return palette.red("    − \(labeler.label(registration))") + why
        }
        lines += added.prefix(max(0, membersShownPerObject - removed.count)).map { palette.green("    + \(labeler.label($0))") }
        if total > membersShownPerObject { lines.append("    … and \(total - membersShownPerObject) more") }
        return lines
    }
}
