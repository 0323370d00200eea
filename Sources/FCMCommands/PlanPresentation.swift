import FCMCore
import FCMEngine
import FCMViews

/// A computed plan in the chosen format: the text with where it was saved, the JSON document, the
/// pull-request comment.
struct PlanPresentation {
    let computed: ComputedPlan
    let output: OutputOptions
    let showTokens: Bool
    let savedTo: String?
    let digest: String?
    let targeting: PlanTargeting
    let targetWarning: String?
    /// The comment's title: `fcmctl plan`, or the command that computed the plan.
    var title = "fcmctl plan"

    func show() throws {
        let redactor = Redactor(showTokens: showTokens)
        let computed = self.computed
        let text = PlanTextRenderer(
            redactor: redactor, deviceNames: computed.desired.deviceNames, maxMembers: output.maxMembers,
            palette: output.palette(console: Console.current), unchangedRead: computed.refresh.unchangedRead)
        let labeler = RegistrationLabeler(redactor: redactor, deviceNames: computed.desired.deviceNames)
        let (out, digest, output, targeting, targetWarning, title) = (
            savedTo, self.digest, self.output, self.targeting, self.targetWarning, self.title
        )
        try Presenter(options: output, secret: redactor.showTokens).show(
            Presentation(
                text: {
                    text.render(computed.plan)
                        + (out.map { ["", "Saved this plan to \($0). Apply exactly it with: fcmctl apply \($0)"] } ?? [])
                        + (digest.map { ["Plan digest: \($0)"] } ?? [])
                },
                json: {
                    DocumentJSON.plan(
                        computed.plan, labeler: labeler, desired: computed.desired, refresh: computed.refresh, savedTo: out, digest: digest,
                        targeting: targeting, notices: computed.deprecations)
                },
                markdown: { maxChars in
                    PlanMarkdownRenderer(
                        labeler: labeler, maxChars: maxChars, maxMembers: output.maxMembers, title: title, project: computed.desired.project.id,
                        digest: digest
                    )
                    .render(
                        computed.plan, refresh: computed.refresh,
                        extra: computed.deprecations.map { "⚠️ " + $0.message } + (targetWarning.map { [$0] } ?? []))
                },
                annotations: computed.plan.refusalDiagnostics(redactor) + computed.plan.notes))
    }
}
