import FCMCore
import FCMReconcile
import Foundation

/// The versioned JSON documents of plan, show, apply and drift (schemas/*.schema.json). Bump
/// `formatVersion` on any change a consumer could notice; fields are only ever added within a version.
enum DocumentJSON {
    static let formatVersion = "1"

    static func header(kind: String) -> [(String, JSONTree)] {
        [("format_version", .string(formatVersion)), ("kind", .string(kind)), ("fcmctl_version", .string(FCMCtl.version))]
    }

    static func registrations(_ list: [Registration], _ redactor: Redactor) -> JSONTree { .array(list.map { .string(redactor($0)) }) }

    static func change(_ change: ObjectChange, redactor: Redactor) -> JSONTree {
        var fields: [(String, JSONTree)] = [
            ("address", .string(change.address)), ("type", .string(change.type)), ("name", .string(change.name)),
            ("action", .string(change.action.rawValue)),
        ]
        if let ownership = change.ownership { fields.append(("ownership", .string(ownership.rawValue))) }
        fields += [
            ("counts", .object([("add", .int(change.added.count)), ("remove", .int(change.removed.count)), ("unchanged", .int(change.unchanged))])),
            ("added", registrations(change.added, redactor)), ("removed", registrations(change.removed, redactor)),
            ("notes", .array(change.notes.map { .string($0) })),
        ]
        return .object(fields)
    }

    static func diagnostic(_ diagnostic: Diagnostic, redactor: Redactor) -> JSONTree {
        var fields: [(String, JSONTree)] = [
            ("severity", .string(diagnostic.severity.rawValue)), ("message", .string(SourceExcerptRedaction.redact(diagnostic.message, redactor))),
        ]
        if let location = diagnostic.location {
            fields += [("file", .string(location.file)), ("line", .int(location.line)), ("column", .int(location.column))]
        }
        return .object(fields)
    }

    static func summary(_ changes: [ObjectChange], _ plan: PlanSummary) -> JSONTree {
        let counts = ActionCounts(changes)
        return .object(
            ViewAction.allCases.map { action in
                (action.rawValue, .int(counts[action].objects))
            } + [
                ("groups_to_create", .int(plan.groupsToCreate)), ("groups_to_delete", .int(plan.groupsToDelete)),
                ("members_to_add", .int(plan.membersToAdd)), ("members_to_remove", .int(plan.membersToRemove)),
                ("subscriptions_to_add", .int(plan.subscriptionsToAdd)), ("subscriptions_to_remove", .int(plan.subscriptionsToRemove)),
            ])
    }

    static func deprecations(_ notices: [DeprecationNotice]) -> JSONTree {
        .array(
            notices.map {
                .object([("id", .string($0.id)), ("date", .string($0.date)), ("days_left", .int($0.daysLeft)), ("message", .string($0.message))])
            })
    }

    /// The plan part shared by plan, show and apply.
    static func planFields(_ plan: Plan, redactor: Redactor, refresh: RefreshSummary?) -> [(String, JSONTree)] {
        let changes = ObjectChange.of(plan)
        var fields: [(String, JSONTree)] = [
            ("has_changes", .bool(plan.hasChanges)), ("summary", summary(changes, plan.summary)),
            ("changes", .array(changes.map { change($0, redactor: redactor) })),
            ("notes", .array(plan.notes.map { diagnostic($0, redactor: redactor) })),
        ]
        if let refresh { fields.append(("refresh", refresh.json)) }
        return fields
    }

    static func plan(
        _ plan: Plan, redactor: Redactor, refresh: RefreshSummary?, savedTo: String? = nil, digest: String? = nil,
        targeting: PlanTargeting = PlanTargeting(), notices: [DeprecationNotice] = []
    ) -> JSONTree {
        var fields =
            header(kind: "plan") + planFields(plan, redactor: redactor, refresh: refresh)
            + [("saved_to", .optional(savedTo)), ("digest", .optional(digest))]
        fields.append(("deprecations", deprecations(notices)))
        if targeting.isPartial {
            fields.append(
                (
                    "partial",
                    .object([
                        ("targets", .array(targeting.targets.map { .string(redactedAddress($0, redactor)) })),
                        ("excludes", .array(targeting.excludes.map { .string(redactedAddress($0, redactor)) })),
                    ])
                ))
        }
        return .object(fields)
    }

    static func redactedAddress(_ address: PlanTargeting.Address, _ redactor: Redactor) -> String {
        guard case .subscription(let topic, let registration) = address else { return address.description }
        return "topic/\(topic)/\(SourceExcerptRedaction.redact(registration, redactor))"
    }

    static func savedPlan(_ saved: SavedPlan, _ plan: Plan, path: String, redactor: Redactor) -> JSONTree {
        let source: [(String, JSONTree)] = [
            ("path", .string(path)), ("created_at", .string(saved.createdAt.ISO8601Format())), ("made_by", .string(saved.fcmctlVersion)),
            ("manifest_paths", .array(saved.manifestPaths.map { .string($0) })), ("manifest_sha256", .string(saved.manifestDigest)),
            ("state_path", .optional(saved.statePath)), ("state_serial", saved.stateSerial.map { .int($0) } ?? .null),
            ("lineage", .string(saved.lineage)), ("project", .string(saved.project.id)), ("digest", .optional(saved.digest)),
        ]
        return .object(header(kind: "saved_plan") + [("saved_plan", .object(source))] + planFields(plan, redactor: redactor, refresh: nil))
    }

    static func outcome(_ outcome: OperationOutcome, redactor: Redactor) -> JSONTree {
        var fields: [(String, JSONTree)] = [
            ("address", .string(outcome.address)), ("operation", .string(outcome.action)),
            ("registrations", registrations(outcome.registrations, redactor)),
        ]
        switch outcome.status {
        case .gone(let reason):
            fields += [("status", .string("gone")), ("reason", .string(reason))]
        case .failed(let code, let message, let retryable):
            fields += [
                ("status", .string("failed")), ("code", .string(code)), ("reason", .string(SourceExcerptRedaction.redact(message, redactor))),
                ("retryable", .bool(retryable)),
            ]
        case .notAttempted(let reason):
            fields += [("status", .string("not_attempted")), ("reason", .string(reason))]
        }
        return .object(fields)
    }

    static func apply(
        _ plan: Plan, report: ApplyReport?, redactor: Redactor, state: (path: String, serial: Int?), notices: [DeprecationNotice] = []
    ) -> JSONTree {
        var fields = header(kind: "apply") + planFields(plan, redactor: redactor, refresh: nil) + [("deprecations", deprecations(notices))]
        if let report {
            let failed = report.failures.reduce(0) { $0 + $1.registrations.count }
            fields += [
                (
                    "result",
                    .object([
                        ("succeeded", .bool(report.succeeded)), ("operations_done", .int(report.operationsDone)),
                        ("requests", .int(report.requestsSucceeded)), ("skipped_gone", .int(report.gone.reduce(0) { $0 + $1.registrations.count })),
                        ("failed", .int(failed)), ("unsettled", .int(report.unsettled)), ("not_attempted", .int(report.notAttempted)),
                        ("stopped", .optional(report.stopped)),
                    ])
                ),
                (
                    "completed",
                    .array(
                        report.completed.sorted { $0.key < $1.key }.map {
                            .object([("address", .string($0.key)), ("status", .string("done")), ("operations", .int($0.value))])
                        })
                ),
                ("outcomes", .array(ApplyTextRenderer.ordered(report.outcomes).map { outcome($0, redactor: redactor) })),
            ]
        } else {
            fields.append(("result", .object([("succeeded", .bool(true)), ("operations_done", .int(0)), ("requests", .int(0))])))
        }
        fields.append(("state", .object([("path", .string(state.path)), ("serial", state.serial.map { .int($0) } ?? .null)])))
        return .object(fields)
    }
}

/// Which refresh ran (`--refresh=all|changed`) and how much it read.
struct RefreshSummary: Sendable {
    var mode: String
    var registrationsRead: Int
    var registrationsKnown: Int
    var groupsRead: Int
    var groupsKnown: Int

    var json: JSONTree {
        .object([
            ("mode", .string(mode)), ("registrations_read", .int(registrationsRead)), ("registrations_known", .int(registrationsKnown)),
            ("groups_read", .int(groupsRead)), ("groups_known", .int(groupsKnown)),
        ])
    }

    var line: String {
        mode == "all"
            ? "Refresh: all (\(plural(registrationsRead, "registration")) and \(plural(groupsRead, "group")) read)."
            : "Refresh: changed only (\(registrationsRead) of \(plural(registrationsKnown, "registration")), \(groupsRead) of \(plural(groupsKnown, "group")) read); "
                + "drift elsewhere is not checked: `fcmctl drift` and apply read everything."
    }
}
