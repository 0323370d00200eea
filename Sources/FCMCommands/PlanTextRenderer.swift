import FCMCore

/// The human view of a plan: one block per changed object with its membership diff, then the stable
/// summary line. Objects and members are sorted so two runs print the same text.
struct PlanTextRenderer {
    let redactor: Redactor
    var deviceNames: [Registration: String] = [:]
    var membersShownPerObject = 50

    /// `kiosk-nyc-001 (cN5kL9…NfG4)` for a named device, the redacted registration otherwise.
    func label(_ registration: Registration) -> String {
        deviceNames[registration].map { "\($0) (\(redactor(registration)))" } ?? redactor(registration)
    }

    func render(_ plan: Plan) -> [String] {
        var lines: [String] = []
        guard plan.hasChanges else {
            lines.append("No changes. FCM matches the manifest.")
            return lines
        }
        for group in plan.groups {
            switch group.action {
            case .create: lines.append("+ \(group.address)  create with \(group.added.count) member\(group.added.count == 1 ? "" : "s")")
            case .delete: lines.append("- \(group.address)  delete (remove its \(group.removed.count) member\(group.removed.count == 1 ? "" : "s"))")
            case .update: lines.append("~ \(group.address)  +\(group.added.count) −\(group.removed.count) (\(group.unchanged) unchanged)")
            }
            lines += memberLines(added: group.action == .delete ? [] : group.added, removed: group.removed)
        }
        for topic in plan.topics {
            lines.append("~ \(topic.address)  +\(topic.added.count) −\(topic.removed.count) (\(topic.unchanged) unchanged)")
            lines += memberLines(added: topic.added, removed: topic.removed)
        }
        lines.append("")
        lines.append(plan.summary.line)
        return lines
    }

    /// Warnings about the plan (drift fcmctl will not act on): diagnostics, so they go to stderr.
    static func printNotes(_ plan: Plan) {
        for note in plan.notes { Console.current.err(note.headline) }
    }

    func memberLines(added: [Registration], removed: [Registration]) -> [String] {
        let all = added.map { "    + \(label($0))" } + removed.map { "    − \(label($0))" }
        guard all.count > membersShownPerObject else { return all }
        return Array(all.prefix(membersShownPerObject)) + ["    … and \(all.count - membersShownPerObject) more"]
    }
}
