import FCMClient
import FCMCore
import FCMManifest
import FCMReconcile
import Foundation

/// A plan and everything it was computed from.
package struct ComputedPlan {
    /// Everything the manifests declare; of a state read in part (`Ledger.slice`), what they declare for the
    /// registrations of the shards read.
    package var desired: DesiredState
    /// The ledger as read, with FCM's answers folded in: what the plan was made from.
    package var ledger: Ledger
    package var snapshot: StateSnapshot
    package var observed: ObservedState
    package var plan: Plan
    package var refresh: RefreshSummary
    /// Deprecated FCM features this run touches, with the days left.
    package var deprecations: [DeprecationNotice] = []
    /// Registrations the plan subscribes that were not read from FCM first (`UnreadCreates`): FCM's answer
    /// to each create says what the read would have.
    package var unread: Set<Registration> = []
}

extension Session {
    /// Reads the state, refreshes what the manifests and the state name from FCM, and plans: the use case
    /// behind plan, apply and drift.
    /// With the `manifest` as written, every removal gets its cause, and registrations the plan introduces
    /// that FCM does not know refuse the plan (drift passes none: it reports, it does not plan).
    /// `unreadCreates` (apply without a saved plan): registrations `UnreadCreates.forApply` allows are subscribed
    /// without a read first.
    package func computePlan(
        _ declared: DesiredState, service: any FCMService, store: any StateStore, mode: RefreshMode = .all, includeLocalGroups: Bool = false,
        manifest: Manifest? = nil, unreadCreates: Bool = false
    ) async throws -> ComputedPlan {
        let (snapshot, sliced, leftOut) = try await readState(store, for: declared, mode: mode, manifest: manifest)
        var desired = sliced
        var declared = declared
        if declared.namesDeferred {
            // A target of one device's subscription is found by its name, wherever its records are.
            let targeting = settings.targeting
            if (targeting.targets + targeting.excludes).contains(where: \.isSubscription) {
                declared = try Self.named(declared, from: manifest) { _ in true }
            } else {
                declared.deviceNames = desired.deviceNames
                declared.namesDeferred = false
            }
        }
        try checkProject(snapshot, store: store)
        try TargetCheck.check(settings.targeting, desired: declared, ledger: snapshot.ledger)
        let usesGroups = !desired.groups.isEmpty || !snapshot.ledger.knownGroupNames.isEmpty
        let usesIID = desired.project.topicAPI == .iid
        if let reason = PlatformDeprecations.refusal(usesGroups: usesGroups, usesIID: usesIID, now: world.now()) {
            throw EngineFailure(reason)
        }
        var scope = RefreshScope(desired: desired, ledger: snapshot.ledger, mode: mode, includeLocalGroups: includeLocalGroups)
        let progress = self.progress
        let refresher = Refresher(service: service, limit: concurrency, executor: executor, progress: { progress.advance($0) })
        // One of the registrations left unread is read first: its answer stands for the credentials, the project and
        // the sender (a refusal there ends the run before anything is sent, as a full refresh would). Unless FCM
        // knows it, nothing is left unread.
        var probe: (registration: Registration, status: RegistrationStatus)?
        if unreadCreates {
            let skipped = UnreadCreates.forApply(desired: desired, ledger: snapshot.ledger, candidates: scope.registrations)
            if let first = skipped.min() {
                let read: ObservedState
                do {
                    read = try await Refresher(service: service, limit: concurrency, executor: executor).refresh(groups: [], registrations: [first])
                } catch {
                    throw EngineFailure("refreshing the live state failed: \(error). Nothing was changed")
                }
                if let status = read.registrations[first], case .active = status {
                    probe = (first, status)
                    scope.leaveUnread(skipped)
                }
            }
        }
        let unread = scope.unread.subtracting(probe.map { [$0.registration] } ?? [])
        notices(
            "Refreshing \(plural(scope.groups.count, "group")) and the subscriptions of "
                + "\(plural(scope.registrations.count, "registration"))" + (mode == .changed ? " (--refresh=changed)" : "") + "…")
        if !unread.isEmpty {
            notices(
                "Not reading \(plural(unread.count, "new registration")) first: nothing this run could remove depends on them, "
                    + "and FCM's answer to each create says what a read would (a token FCM does not know fails its own create).")
        }
        var observed: ObservedState
        let started = world.clock.now()
        progress.beginPhase("Refreshing", total: scope.groups.count + scope.registrations.count)
        do {
            var read = try await refresher.refresh(groups: scope.groups, registrations: scope.registrations)
            if mode == .all { read.checkedGroups = nil }
            if let probe { read.registrations[probe.registration] = probe.status }
            observed = read
        } catch {
            progress.endPhase()
            throw EngineFailure("refreshing the live state failed: \(error). Nothing was changed")
        }
        progress.endPhase()
        if settings.verbose {
            let seconds = self.seconds(since: started)
            let count = observed.registrations.count
            notices(
                String(
                    format: "Refreshed %d registrations and %d groups in %.2f s (%.0f registrations/s).",
                    count, observed.groups.count, seconds, Double(count) / max(seconds, 0.001)))
        }
        let ledger = snapshot.ledger.aligned(with: observed, desired: desired, adoptExisting: settings.adoptExisting)
        observed.fillUnreadMembers(from: ledger)
        noteRecordedMembers(observed)
        // A registration the manifests no longer name keeps the name it had, so a rotated token reads as
        // that device's, on both sides of the change.
        for (registration, name) in snapshot.ledger.deviceNames where desired.deviceNames[registration] == nil {
            desired.deviceNames[registration] = name
        }
        var plan = settings.targeting.apply(
            to: Planner.plan(desired: scope.plannedDesired, ledger: ledger, observed: observed, adoptExisting: settings.adoptExisting),
            deviceNames: desired.deviceNames)
        let rotations = snapshot.ledger.rotations(in: scope.plannedDesired)
        plan.findings += Self.rotations(rotations, plan: plan)
        plan.successors = Dictionary(rotations.map { ($0.old, $0.new) }) { first, _ in first }
        plan.unreadable = observed.unreadable.count
        if let manifest {
            plan.causes = RemovalExplanation(manifest: manifest, desired: declared, currentNames: declared.deviceNames, ledger: ledger)
                .causes(of: plan)
            let unknown = IntroducedRegistrations.unknown(
                desired: scope.plannedDesired, ledger: snapshot.ledger, observed: observed, manifest: manifest,
                replaced: Dictionary(rotations.map { ($0.new, $0.old) }) { first, _ in first })
            if !unknown.isEmpty {
                plan.refusals.append(.unknownRegistrations(unknown))
                // The refusal says it with the device's line; "remove it from the manifest" would be the wrong advice.
                let introduced = Set(unknown.map(\.registration))
                plan.findings.removeAll {
                    if case .registrationGone(_, let registration, _, _, _) = $0 { return introduced.contains(registration) }
                    if case .rotated(_, _, let new) = $0 { return introduced.contains(new) }
                    return false
                }
            }
        }
        let deprecations = PlatformDeprecations.notices(
            usesGroups: usesGroups, createsGroups: plan.groups.contains { $0.action == .create }, usesIID: usesIID, now: world.now())
        for notice in deprecations { notices.warning(settings.verbose ? notice.message : notice.summary) }
        var refresh = scope.summary
        refresh.registrationsKnown += leftOut
        return ComputedPlan(
            desired: desired, ledger: ledger, snapshot: snapshot, observed: observed, plan: plan, refresh: refresh, deprecations: deprecations,
            unread: unread)
    }

    /// One finding per device whose registration the plan replaces: the rotation, not an anonymous add and remove.
    package static func rotations(_ rotations: [(name: String, old: Registration, new: Registration)], plan: Plan) -> [PlanFinding] {
        let touched = Set(plan.topics.flatMap { $0.added + $0.removed } + plan.groups.flatMap { $0.added + $0.removed })
        return rotations.filter { touched.contains($0.old) || touched.contains($0.new) }.map {
            .rotated(device: $0.name, old: $0.old, new: $0.new)
        }
    }

    /// One note when the operator's member export probe turned out absent; otherwise, in `--verbose`, where
    /// group members came from.
    func noteRecordedMembers(_ observed: ObservedState) {
        let recorded = observed.groupsWithRecordedMembers
        guard !recorded.isEmpty else { return }
        if let reason = connection?.live?.groupExportFallback {
            notices.note("the group member export probe is off for this run (\(reason)); group members come from the state")
        } else if settings.verbose {
            notices("Group members of \(plural(recorded.count, "group")) come from the state: FCM documents no way to list them.")
        }
    }

    /// Names each registration FCM would not tell about (redacted) and what was left out because of it.
    /// Returns the exit code to end with: 1, or 0 under `--skip-unreadable`.
    package func reportUnreadable(_ observed: ObservedState) -> Int32 {
        guard !observed.unreadable.isEmpty else { return ExitCodes.success }
        let redactor = Redactor(showTokens: settings.showTokens)
        let severity: Notice.Severity = settings.skipUnreadable ? .warning : .error
        for (registration, reason) in observed.unreadable.sorted(by: { $0.key < $1.key }).prefix(20) {
            notices(Notice(severity, "could not read the subscriptions of \(redactor(registration)): \(reason)"))
        }
        if observed.unreadable.count > 20 { notices(Notice(severity, "… and \(observed.unreadable.count - 20) more registrations")) }
        notices(
            Notice(
                severity,
                "\(observed.unreadable.count) registration\(observed.unreadable.count == 1 ? "" : "s") could not be read; "
                    + "nothing that depends on them was planned, and their records are kept. Run again later"
                    + (settings.skipUnreadable ? "" : ", or pass --skip-unreadable to accept the rest with exit 0")))
        return settings.skipUnreadable ? ExitCodes.success : ExitCodes.error
    }
}
