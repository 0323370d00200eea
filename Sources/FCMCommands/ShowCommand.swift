import ArgumentParser
import FCMCore
import FCMEngine
import FCMViews
import Foundation

/// `fcmctl show FILE`: a saved plan, as `plan` printed it, with what it was made from.
struct ShowCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "show", abstract: "Print a plan saved by `plan -out FILE`.")

    @Argument(help: "The saved plan.")
    var file: String

    @Flag(help: "Show registrations in full instead of redacted.")
    var showTokens = false

    @OptionGroup var output: OutputOptions

    func run() throws {
        let console = Console.current
        let saved: SavedPlan
        let plan: Plan
        do {
            saved = try SavedPlanFile.read(file)
            plan = try saved.plan()
        } catch {
            throw fail("\(error)")
        }
        let state = saved.stateSerial.map { "serial \($0) of lineage \(saved.lineage)" } ?? "no state yet (lineage \(saved.lineage))"
        var header = ["Saved plan \(file): made \(saved.createdAt.ISO8601Format()) by fcmctl \(saved.fcmctlVersion)"]
        header.append("  manifest: \(saved.manifestPaths.joined(separator: ", ")) (sha256 \(saved.manifestDigest.prefix(16))…)")
        header.append("  state: \(saved.statePath ?? "?"), \(state)")
        header.append(
            "  project: \(saved.project.id) (topic API \(saved.project.topicApi))" + (saved.maxRemovals.map { "; --max-removals \($0)" } ?? ""))
        header.append("  digest: \(saved.digest ?? "none")")
        for note in saved.notes { console.err(note) }
        let redactor = Redactor(showTokens: showTokens)
        let unchangedRead = saved.options.refresh == RefreshMode.all.rawValue
        let text = PlanTextRenderer(
            redactor: redactor, deviceNames: saved.registrationNames, maxMembers: output.maxMembers, palette: output.palette(console: console),
            unchangedRead: unchangedRead)
        let labeler = RegistrationLabeler(redactor: redactor, deviceNames: saved.registrationNames)
        let file = self.file
        try Presenter(options: output, secret: redactor.showTokens).show(
            Presentation(
                text: { header + [""] + text.render(plan) },
                json: { DocumentJSON.savedPlan(saved, plan, path: file, labeler: labeler) },
                markdown: { maxChars in
                    PlanMarkdownRenderer(
                        labeler: labeler, maxChars: maxChars, maxMembers: output.maxMembers, title: "fcmctl plan (saved: \(file))",
                        project: saved.project.id, digest: saved.digest, unchangedRead: unchangedRead
                    )
                    .render(plan, extra: ["Made \(saved.createdAt.ISO8601Format()) from state \(state)."])
                }))
    }
}
