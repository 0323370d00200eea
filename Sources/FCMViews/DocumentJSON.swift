import FCMBuildInfo
import FCMCore
import Foundation

/// The versioned JSON documents of plan, show, apply, drift and errors (schemas/*.schema.json). Bump
/// `formatVersion` on any change a consumer could notice; fields are only ever added within a version.
package enum DocumentJSON {
    package static let formatVersion = "1"

    package static func header(kind: String) -> [(String, JSONTree)] {
        [("format_version", .string(formatVersion)), ("kind", .string(kind)), ("fcmctl_version", .string(BuildInfo.version))]
    }

    package static func registrations(_ list: [Registration], _ redactor: Redactor) -> JSONTree { .array(list.map { .string(redactor($0)) }) }

    /// Device names aligned with `list`, null where the manifest names none; nil when it names none of them,
    /// so a fleet of unnamed registrations does not carry a column of nulls.
    package static func devices(_ list: [Registration], _ labeler: RegistrationLabeler) -> JSONTree? {
        guard !labeler.deviceNames.isEmpty, list.contains(where: { labeler.name($0) != nil }) else { return nil }
        return .array(list.map { JSONTree.optional(labeler.name($0)) })
    }

    package static func location(_ location: SourceLocation) -> JSONTree {
        .object([("file", .string(location.file)), ("line", .int(location.line)), ("column", .int(location.column))])
    }

    package static func change(_ change: ObjectChange, labeler: RegistrationLabeler) -> JSONTree {
        var fields: [(String, JSONTree)] = [
            ("address", .string(change.address.description)), ("type", .string(change.type)), ("name", .string(change.name)),
            ("action", .string(change.action.rawValue)),
        ]
        if let ownership = change.ownership { fields.append(("ownership", .string(ownership.rawValue))) }
        if let location = change.location { fields.append(("location", Self.location(location))) }
        fields += [
            (
                "counts",
                .object([
                    ("add", .int(change.added.count)), ("remove", .int(change.removed.count)),
                    ("unchanged", change.unchanged.map { .int($0) } ?? .null),
                ])
            ),
            ("added", registrations(change.added, labeler.redactor)), ("removed", registrations(change.removed, labeler.redactor)),
        ]
        if let names = devices(change.added, labeler) { fields.append(("added_devices", names)) }
        if let names = devices(change.removed, labeler) { fields.append(("removed_devices", names)) }
        if !change.causes.isEmpty { fields.append(("removed_causes", .array(change.causes.map { cause($0, type: change.type) }))) }
        fields.append(("notes", .array(change.notes.map { .string($0) })))
        return .object(fields)
    }

    /// Why one registration is removed: `cause` (the kind), the words, and what the kind is about.
    package static func cause(_ cause: RemovalCause?, type: String) -> JSONTree {
        guard let cause else { return .null }
        var fields: [(String, JSONTree)] = [("cause", .string(cause.kind)), ("message", .string(cause.reason(in: type)))]
        if let device = cause.device { fields.append(("device", .string(device))) }
        if case .labelMismatch(_, let label, let wanted, let value) = cause {
            fields += [("label", .string(label)), ("wanted", .array(wanted.map { .string($0) })), ("value", .optional(value))]
        }
        return .object(fields)
    }

    /// Why a plan may not be applied: each refusal's kind and sentence, and its placed problems.
    package static func refusals(_ plan: Plan, redactor: Redactor) -> JSONTree {
        .array(
            plan.refusals.map { refusal in
                let kind =
                    switch refusal {
                    case .tooManyRemovals: "max_removals"
                    case .unknownRegistrations: "unknown_registrations"
                    }
                return .object([
                    ("kind", .string(kind)), ("message", .string(refusal.headline(redactor))),
                    ("problems", .array(refusal.diagnostics(redactor).map { diagnostic($0, redactor: redactor) })),
                ])
            })
    }

    package static func diagnostic(_ diagnostic: Diagnostic, redactor: Redactor) -> JSONTree {
        var fields: [(String, JSONTree)] = [
            ("severity", .string(diagnostic.severity.rawValue)), ("message", .string(SourceExcerptRedaction.redact(diagnostic.message, redactor))),
        ]
        if let location = diagnostic.location {
            fields += [("file", .string(location.file)), ("line", .int(location.line)), ("column", .int(location.column))]
        }
        return .object(fields)
    }

    package static func summary(_ changes: [ObjectChange], _ plan: PlanSummary) -> JSONTree {
        let counts = ActionCounts(changes)
        return .object(
            ChangeAction.allCases.map { action in
                (action.rawValue, .int(counts[action].objects))
            } + [
                ("groups_to_create", .int(plan.groupsToCreate)), ("groups_to_delete", .int(plan.groupsToDelete)),
                ("members_to_add", .int(plan.membersToAdd)), ("members_to_remove", .int(plan.membersToRemove)),
                ("subscriptions_to_add", .int(plan.subscriptionsToAdd)), ("subscriptions_to_remove", .int(plan.subscriptionsToRemove)),
            ])
    }

    package static func deprecations(_ notices: [DeprecationNotice]) -> JSONTree {
        .array(
            notices.map {
                .object([("id", .string($0.id)), ("date", .string($0.date)), ("days_left", .int($0.daysLeft)), ("message", .string($0.message))])
            })
    }

    /// The plan part shared by plan, show and apply. `desired` gives each declared object its place in the
    /// manifest; `unchangedRead` is false when topics were read in part (`--refresh=changed`).
    package static func planFields(
        _ plan: Plan, labeler: RegistrationLabeler, refresh: RefreshSummary?, desired: DesiredState? = nil, unchangedRead: Bool = true
    ) -> [(String, JSONTree)] {
        let changes = ObjectChange.of(plan, unchangedRead: unchangedRead && (refresh?.unchangedRead ?? true), desired: desired)
        var fields: [(String, JSONTree)] = [
            ("has_changes", .bool(plan.hasChanges)), ("summary", summary(changes, plan.summary)),
            ("changes", .array(changes.map { change($0, labeler: labeler) })),
            ("notes", .array(plan.notes.map { diagnostic($0, redactor: labeler.redactor) })),
        ]
        if !plan.refusals.isEmpty { fields.append(("refusals", refusals(plan, redactor: labeler.redactor))) }
        if let refresh { fields.append(("refresh", refresh.json)) }
        return fields
    }

    package static func plan(
        _ plan: Plan, labeler: RegistrationLabeler, desired: DesiredState, refresh: RefreshSummary?, savedTo: String? = nil,
        digest: String? = nil, targeting: PlanTargeting = PlanTargeting(), notices: [DeprecationNotice] = []
    ) -> JSONTree {
        let redactor = labeler.redactor
        var fields =
            header(kind: "plan") + [("project", .string(desired.project.id))]
            + planFields(plan, labeler: labeler, refresh: refresh, desired: desired)
            + [("saved_to", .optional(savedTo)), ("digest", .optional(digest))]
        fields.append(("deprecations", deprecations(notices)))
        if targeting.isPartial {
            fields.append(
                (
                    "partial",
                    .object([
                        ("targets", .array(targeting.targets.map { .string(redactedText(of: $0, redactor)) })),
                        ("excludes", .array(targeting.excludes.map { .string(redactedText(of: $0, redactor)) })),
                    ])
                ))
        }
        return .object(fields)
    }

    package static func redactedText(of address: Address, _ redactor: Redactor) -> String {
        guard case .subscription(let topic, let registration) = address else { return address.description }
        return "\(Address.topic(topic))/\(SourceExcerptRedaction.redact(registration, redactor))"
    }

    package static func savedPlan(_ saved: SavedPlan, _ plan: Plan, path: String, labeler: RegistrationLabeler) -> JSONTree {
        let source: [(String, JSONTree)] = [
            ("path", .string(path)), ("created_at", .string(saved.createdAt.ISO8601Format())), ("made_by", .string(saved.fcmctlVersion)),
            ("manifest_paths", .array(saved.manifestPaths.map { .string($0) })), ("manifest_sha256", .string(saved.manifestDigest)),
            ("state_path", .optional(saved.statePath)), ("state_serial", saved.stateSerial.map { .int($0) } ?? .null),
            ("lineage", .string(saved.lineage)), ("project", .string(saved.project.id)), ("digest", .optional(saved.digest)),
        ]
        return .object(
            header(kind: "saved_plan") + [("project", .string(saved.project.id)), ("saved_plan", .object(source))]
                + planFields(plan, labeler: labeler, refresh: nil, unchangedRead: saved.options.refresh == RefreshMode.all.rawValue))
    }
}
