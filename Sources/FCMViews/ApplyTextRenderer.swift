import FCMCore
import FCMReconcile

/// The human view of an apply report: what was done per object on stdout, then on stderr what was skipped
/// (gone registrations, with the suggestion), what failed and what was not attempted. Registrations are
/// redacted unless `--show-tokens`, and carry their device names: "kiosk-7 (dXk…b2Qe) is no longer
/// registered" says which screen to look at.
package struct ApplyTextRenderer {
    package let labeler: RegistrationLabeler

    package init(labeler: RegistrationLabeler) {
        self.labeler = labeler
    }
    /// Beyond this many objects, the done lines are summed up rather than listed.
    package var objectsListed = 200
    /// Beyond this many, skipped and failed operations are counted rather than listed one per line.
    package var outcomesListed = 50

    package func render(_ report: ApplyReport) -> (out: [String], problems: [Diagnostic]) {
        var out: [String] = []
        let done = report.completed.sorted { $0.key < $1.key }
        for (address, count) in done.prefix(objectsListed) {
            out.append("\(address): \(count) operation\(count == 1 ? "" : "s") done")
        }
        if done.count > objectsListed {
            let rest = done.dropFirst(objectsListed)
            out.append("… and \(rest.reduce(0) { $0 + $1.value }) operations done on \(rest.count) more objects")
        }
        var err: [Diagnostic] = []
        let ordered = Self.ordered(report.outcomes)
        for outcome in ordered.prefix(outcomesListed) {
            let who =
                outcome.registrations.prefix(5).map(labeler.label).joined(separator: ", ")
                + (outcome.registrations.count > 5 ? " and \(outcome.registrations.count - 5) more" : "")
            switch outcome.status {
            case .gone(let reason):
                err.append(.warning("\(outcome.address): \(who) is no longer registered (\(reason)); it was skipped: remove it from the manifest"))
            case .alreadySubscribed:
                err.append(Diagnostic(.note, "\(outcome.address): \(who) \(Self.alreadySubscribed)"))
            case .failed(let code, let message, let retryable):
                err.append(
                    .error(
                        "\(outcome.address): \(outcome.action) \(who): \(code): \(message)\(retryable ? " (temporary: re-running apply retries it)" : "")"
                    ))
            case .notAttempted(let reason):
                err.append(Diagnostic(.note, "\(outcome.address): \(outcome.action) \(who) not attempted: \(reason)"))
            }
        }
        if ordered.count > outcomesListed {
            err.append(
                Diagnostic(
                    .note,
                    "… and \(ordered.count - outcomesListed) more skipped, already subscribed, failed or not attempted operations; "
                        + "--json-into FILE or --format json lists every one"))
        }
        if let stopped = report.stopped {
            err.append(.error("\(stopped) (\(report.notAttempted) operation\(report.notAttempted == 1 ? "" : "s") not attempted)"))
        }
        return (out, err)
    }

    /// What a create FCM answered "already exists" means for fcmctl's records.
    package static let alreadySubscribed = "was already subscribed (not fcmctl's; not recorded, so fcmctl will never remove it)"

    /// A problem as its stderr line: `error: …`, `warning: …`, `note: …`.
    package static func line(_ problem: Diagnostic) -> String { "\(problem.severity.rawValue): \(PrintableText.lines(problem.message))" }

    package static func ordered(_ outcomes: [OperationOutcome]) -> [OperationOutcome] {
        outcomes.sorted {
            ($0.address, $0.action.rawValue, $0.registrations.first?.value ?? "")
                < ($1.address, $1.action.rawValue, $1.registrations.first?.value ?? "")
        }
    }

    /// The stable last line: requests are requests (an IID batch is one), operations are operations.
    package static func summary(_ report: ApplyReport) -> String {
        let failed = report.failures.reduce(0) { $0 + $1.registrations.count }
        let gone = report.gone.count
        // A run stopped by SIGINT or SIGTERM did not fail: it was interrupted, and a re-run continues it.
        let ending = report.stopRequested ? "interrupted" : report.succeeded ? "complete" : "finished with failures"
        return
            "Apply \(ending): \(report.operationsDone) operation\(report.operationsDone == 1 ? "" : "s") done "
            + "in \(report.requestsSucceeded) request\(report.requestsSucceeded == 1 ? "" : "s"), \(gone) skipped (registration gone), "
            + (report.alreadySubscribed > 0 ? "\(report.alreadySubscribed) already subscribed (not fcmctl's; not recorded), " : "")
            + "\(failed) failed"
            + (report.stopRequested ? ", \(report.notAttempted) not attempted (re-run to continue)." : ".")
            + (report.unsettled > 0
                ? " \(report.unsettled) of the failed may have happened (no answer said): they stay pending in the state until the next plan reads FCM."
                : "")
    }
}
