import FCMCore
import FCMEngine
import FCMViews
import Foundation

/// The plan before asking (text), and the result in the chosen format: what was done per object, what was
/// skipped or failed, the state.
struct ApplyPresentation {
    let output: OutputOptions
    let showTokens: Bool

    /// Text prints the plan before asking; the other formats are one document at the end.
    func printPlan(_ plan: Plan, deviceNames: [Registration: String], unchangedRead: Bool = true) {
        guard output.format == .text || output.format == .github else { return }
        let text = PlanTextRenderer(
            redactor: Redactor(showTokens: showTokens), deviceNames: deviceNames, maxMembers: output.maxMembers,
            palette: output.palette(console: Console.current), unchangedRead: unchangedRead)
        Console.current.out(lines: text.render(plan))
    }

    func showResult(_ outcome: ApplyOutcome) throws {
        let console = Console.current
        let redactor = Redactor(showTokens: showTokens)
        let labeler = RegistrationLabeler(redactor: redactor, deviceNames: outcome.desired.deviceNames)
        let state = (path: outcome.stateName, serial: outcome.serial)
        let stateLine =
            state.serial.map { "State: \(state.path) (serial \($0))." } ?? outcome.unsaved?.stateLine ?? "The state could not be written."
        var problems: [Diagnostic] = []
        var text: [String] = [stateLine]
        if let report = outcome.report {
            let rendered = ApplyTextRenderer(labeler: labeler).render(report)
            problems = rendered.problems
            text = [""] + rendered.out + [ApplyTextRenderer.summary(report) + " " + stateLine]
        }
        // Skipped and failed operations are diagnostics: stderr in text, inside the document otherwise.
        if output.format == .text || output.format == .github { for problem in problems { console.say(Notice(problem)) } }
        let output = self.output
        try Presenter(options: output, command: "apply", secret: redactor.showTokens).show(
            Presentation(
                text: { text },
                json: {
                    DocumentJSON.apply(
                        outcome.plan, report: outcome.report, labeler: labeler, desired: outcome.desired, state: state,
                        notices: outcome.deprecations, unchangedRead: outcome.unchangedRead)
                },
                markdown: { maxChars in
                    let result = outcome.report.map { ApplyTextRenderer.summary($0) } ?? "Nothing to change."
                    return PlanMarkdownRenderer(
                        labeler: labeler, maxChars: maxChars, maxMembers: output.maxMembers, title: "fcmctl apply",
                        project: outcome.desired.project.id, unchangedRead: outcome.unchangedRead
                    )
                    .render(
                        outcome.plan,
                        extra: outcome.deprecations.map { "⚠️ " + $0.message } + [result + " " + stateLine]
                            + problems.prefix(20).map(ApplyTextRenderer.line))
                },
                annotations: problems))
    }
}

/// `apply` without `--auto-approve` asks at a terminal, and refuses to guess anywhere else.
enum ApplyConfirmation {
    static func ask(autoApprove: Bool) throws {
        let console = Console.current
        if autoApprove { return }
        guard console.isInteractive else {
            throw fail("apply needs confirmation: standard input is not a terminal, so pass --auto-approve")
        }
        console.writeOut("\nApply these changes? Only 'yes' is accepted: ")
        guard console.readLine()?.trimmingCharacters(in: .whitespaces) == "yes" else {
            throw fail("apply cancelled; nothing was changed")
        }
    }
}
