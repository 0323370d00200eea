import FCMCore
import FCMEngine
import FCMViews

/// A local group's fan-out as `send --group` and `migrate groups --apply` show it: each member's outcome
/// (sent, unregistered, failed) and the sum. Unregistered members are drift: the manifest should drop them.
struct FanOutPresentation {
    let console: Console
    let redactor: Redactor
    /// The manifest's device names, to label members with.
    let names: [Registration: String]

    func show(_ report: FanOutReport) {
        let labeler = RegistrationLabeler(redactor: redactor, deviceNames: names)
        let verb = report.validateOnly ? "validated" : "sent"
        for outcome in report.outcomes {
            switch outcome.status {
            case .sent:
                console.out("  \(verb)        \(labeler.label(outcome.registration))")
            case .unregistered(let code):
                console.out("  unregistered  \(labeler.label(outcome.registration)) (\(code)): remove it from the manifest")
            case .failed(let detail):
                console.out("  failed        \(labeler.label(outcome.registration)): \(SourceExcerptRedaction.redact(detail, redactor))")
            }
        }
        let group = Address.group(report.group)
        console.out(
            "\(report.validateOnly ? "Dry run (validate only) to" : "Fan-out to") local \(group): \(plural(report.outcomes.count, "member")), "
                + "\(report.sent) \(verb), \(report.unregistered) unregistered, \(report.failed) failed.")
        if report.unregistered > 0 {
            console.say(
                .warning(
                    "\(plural(report.unregistered, "member")) of \(group) no longer registered: drift; remove them from the manifest",
                    about: group))
        }
    }
}
