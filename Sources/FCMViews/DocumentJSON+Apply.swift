import FCMCore
import FCMReconcile

/// The apply report: the plan it ran, what was done per object, and every operation that was skipped,
/// failed or not attempted, with the device names of its registrations where the manifest gives them.
extension DocumentJSON {
    package static func outcome(_ outcome: OperationOutcome, labeler: RegistrationLabeler) -> JSONTree {
        let redactor = labeler.redactor
        var fields: [(String, JSONTree)] = [
            ("address", .string(outcome.address.description)), ("operation", .string(outcome.action.rawValue)),
            ("registrations", registrations(outcome.registrations, redactor)),
        ]
        if let names = devices(outcome.registrations, labeler) { fields.append(("devices", names)) }
        fields.append(("status", .string(outcome.status.kind.rawValue)))
        switch outcome.status {
        case .gone(let reason):
            fields.append(("reason", .string(reason)))
        case .alreadySubscribed:
            fields.append(("reason", .string(ApplyTextRenderer.alreadySubscribed)))
        case .failed(let code, let message, let retryable):
            fields += [
                ("code", .string(code)), ("reason", .string(SourceExcerptRedaction.redact(message, redactor))),
                ("retryable", .bool(retryable)),
            ]
        case .notAttempted(let reason):
            fields.append(("reason", .string(reason)))
        }
        return .object(fields)
    }

    /// `unchangedRead`: false for a saved plan made with `--refresh=changed`.
    package static func apply(
        _ plan: Plan, report: ApplyReport?, labeler: RegistrationLabeler, desired: DesiredState, state: (path: String, serial: Int?),
        notices: [DeprecationNotice] = [], unchangedRead: Bool = true
    ) -> JSONTree {
        var fields =
            header(kind: "apply") + [("project", .string(desired.project.id))]
            + planFields(plan, labeler: labeler, refresh: nil, desired: desired, unchangedRead: unchangedRead)
            + [("deprecations", deprecations(notices))]
        if let report {
            let failed = report.failures.reduce(0) { $0 + $1.registrations.count }
            var result: [(String, JSONTree)] = [
                ("succeeded", .bool(report.succeeded)), ("operations_done", .int(report.operationsDone)),
                ("requests", .int(report.requestsSucceeded)), ("skipped_gone", .int(report.gone.reduce(0) { $0 + $1.registrations.count })),
            ]
            // Only when there are any: a document of an apply without them stays as it always was.
            if report.alreadySubscribed > 0 { result.append(("already_subscribed", .int(report.alreadySubscribed))) }
            result += [
                ("failed", .int(failed)), ("unsettled", .int(report.unsettled)), ("not_attempted", .int(report.notAttempted)),
                ("stopped", .optional(report.stopped)),
            ]
            fields += [
                ("result", .object(result)),
                (
                    "completed",
                    .array(
                        report.completed.sorted { $0.key < $1.key }.map {
                            .object([
                                ("address", .string($0.key.description)), ("status", .string(OperationStatus.done.rawValue)),
                                ("operations", .int($0.value)),
                            ])
                        })
                ),
                ("outcomes", .array(ApplyTextRenderer.ordered(report.outcomes).map { outcome($0, labeler: labeler) })),
            ]
        } else {
            fields.append(("result", .object([("succeeded", .bool(true)), ("operations_done", .int(0)), ("requests", .int(0))])))
        }
        fields.append(("state", .object([("path", .string(state.path)), ("serial", state.serial.map { .int($0) } ?? .null)])))
        return .object(fields)
    }
}
