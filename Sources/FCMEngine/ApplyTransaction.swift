import FCMCore
import FCMReconcile
import Foundation

/// What an apply did, for the view, and how the run ends.
package struct ApplyOutcome {
    package var plan: Plan
    /// Nil when there was nothing to send.
    package var report: ApplyReport?
    package var stateName: String
    /// The serial written at the end; nil when no state was written at the end (`unsaved` says why, and where
    /// the records are).
    package var serial: Int?
    package var desired: DesiredState
    package var deprecations: [DeprecationNotice]
    /// False for a saved plan made with `--refresh=changed`, whose topics' unchanged counts were not read.
    package var unchangedRead: Bool
    package fileprivate(set) var unsaved: UnsavedState?
}

/// The apply use case: the state written before the first request and after the last, every request
/// journaled as an intent first, completions after; outcomes per object; the exit it ends with.
package struct ApplyTransaction {
    package let session: Session
    package let service: any FCMService
    package let store: any StateStore
    package let lock: StateLock?
    /// `apply --timeout`: stop sending after this long from the start of the run (zero: no limit).
    package var timeout: Duration = .zero
    /// The timeout as the person wrote it, for the message when it passes.
    package var timeoutText = ""
    /// Asked before the first request; throws to cancel. Not asked when there is nothing to send.
    package var confirm: () throws -> Void = {}

    package init(session: Session, service: any FCMService, store: any StateStore, lock: StateLock?) {
        self.session = session
        self.service = service
        self.store = store
        self.lock = lock
    }

    /// Carries out the computed plan on its ledger (already aligned with what FCM reported). `declared` is the
    /// manifest as a whole when the whole of it is applied (nil for a partial apply).
    package func execute(_ computed: ComputedPlan, declared: DesiredState?) async throws -> ApplyOutcome {
        let (plan, observed, snapshot, desired) = (computed.plan, computed.observed, computed.snapshot, computed.desired)
        var ledger = computed.ledger
        ledger.recordProtection(from: desired)
        // A state written by this run is this project's: an old state without a project is bound here.
        if let project = session.project { ledger.bind(to: project) }
        var version = snapshot.version
        var outcome = ApplyOutcome(
            plan: plan, report: nil, stateName: store.displayName, serial: nil, desired: desired, deprecations: computed.deprecations,
            unchangedRead: computed.refresh.unchangedRead)
        if !plan.hasChanges {
            if let declared { ledger.recordApplied(declared, unsettled: observed.unreadable.keys) }
            let changed = !ledger.hasSameRecords(as: snapshot.ledger) || snapshot.needsWrite
            // Recovered records and FCM's corrections are saved even when there is nothing to send.
            if changed || version == nil { version = try await saveBeforeSending(&ledger, replacing: version) }
            outcome.serial = ledger.serial
            return outcome
        }
        try confirm()
        // Written first: it folds in any journal of an earlier run and proves the state can be written,
        // before the first request.
        version = try await saveBeforeSending(&ledger, replacing: version)
        let operations = plan.groups.reduce(0) { $0 + $1.steps.count } + plan.topics.reduce(0) { $0 + $1.added.count + $1.removed.count }
        let journal: any StateJournal
        do {
            journal = try await store.openJournal(base: version!, expectedBytes: JournalBudget.bytes(for: plan))
        } catch {
            throw EngineFailure("\(error)")
        }
        let started = session.world.clock.now()
        let progress = session.progress
        progress.beginPhase("Applying", total: operations)
        let stop = session.stop
        // From here a signal stops the sending and lets this run write its state, instead of ending the process.
        session.signals.draining(stop)
        defer { session.signals.finished() }
        let deadline = startDeadline()
        let (report, applied) = await Applier(
            service: service, limit: session.concurrency, executor: session.executor, progress: { progress.advance($0) }
        )
        .apply(plan, observed: observed, ledger: ledger, journal: journal, lock: lock, stop: stop, unverified: computed.unread)
        deadline?.cancel()
        session.signals.sendingEnded()
        progress.endPhase()
        for (address, count) in report.completed.sorted(by: { $0.key < $1.key }) {
            progress.object(address: address, status: .done, operations: count)
        }
        for outcome in report.outcomes {
            progress.object(address: outcome.address, status: outcome.status.kind, operations: outcome.registrations.count)
        }
        if session.settings.verbose {
            let seconds = session.seconds(since: started)
            let changes = plan.summary.subscriptionsToAdd + plan.summary.subscriptionsToRemove
            session.notices(
                String(
                    format: "Applied %d subscription changes in %.2f s (%.0f changes/s); journal %d bytes.", changes, seconds,
                    Double(changes) / max(seconds, 0.001), await journal.bytesWritten))
        }
        ledger = applied
        if let declared {
            // A registration FCM called gone when it was to be subscribed was never seen working: it stays out of
            // what the last apply declared, so the next plan checks it again as one the manifest introduces.
            // One FCM answered "already exists" is settled: FCM knows it, and it is subscribed.
            let unsettled = report.outcomes.filter {
                switch $0.status {
                case .gone: $0.action == .subscribe
                case .alreadySubscribed: false
                default: true
                }
            }
            ledger.recordApplied(
                declared, unsettled: unsettled.flatMap(\.registrations) + observed.unreadable.keys, unsettledObjects: unsettled.map(\.address))
        }
        outcome.report = report
        if let lock, await !store.stillHolds(lock) {
            // The state is the new holder's now: a write here, even one the compare-and-swap lets through
            // (before the new holder's first write), would go behind its back.
            let fate = await journal.fate()
            if case .lost = fate, let serial = await saveUnderAFreshLock(&ledger, replacing: version) {
                session.notices(
                    "the state lock \(lock.info.id) was removed while this run worked, and its journal \(store.journalDisplayName) was removed "
                        + "without being folded in, so this run held the only copy of its records: it took the lock again and recorded them "
                        + "in the state (serial \(serial))")
                outcome.serial = serial
                return outcome
            }
            outcome.unsaved = UnsavedState(
                reason: "the state lock \(lock.info.id) was taken over or removed while this run worked, so it wrote no state", fate: fate,
                journalName: store.journalDisplayName)
            return outcome
        }
        do {
            version = try await save(&ledger, replacing: version)
            outcome.serial = ledger.serial
        } catch {
            outcome.unsaved = UnsavedState(reason: "\(error)", fate: await journal.fate(), journalName: store.journalDisplayName)
        }
        return outcome
    }

    /// Records `ledger` under a lock taken anew, without waiting (a holder that has it now owns the state),
    /// and only over the state this run began from: for a run whose lock and journal were both removed, which
    /// holds the only copy of its records. Returns the serial written, or nil if either condition fails.
    func saveUnderAFreshLock(_ ledger: inout Ledger, replacing version: StateVersion?) async -> Int? {
        guard let fresh = try? await store.lock(operation: "apply (recording after its lock was removed)", timeout: .zero) else { return nil }
        let saved = try? await save(&ledger, replacing: version)
        try? await store.unlock(fresh)
        return saved.map { _ in ledger.serial }
    }

    /// `--timeout`, counted from the start of the run: when it passes, the apply stops sending as it would
    /// for a signal, and ends with exit 3.
    func startDeadline() -> Task<Void, Never>? {
        guard timeout > .zero else { return nil }
        let limit = timeout.seconds
        let deadline = session.started + limit
        let stop = session.stop
        let clock = session.world.clock
        let text = timeoutText
        return Task {
            // A deadline, not a sleep: on a manual clock it passes only when the run's own waits move time past it.
            do { try await clock.wait(until: deadline) } catch { return }
            stop.request("apply reached its --timeout of \(text)", exitCode: ExitCodes.partialFailure)
        }
    }

    func saveBeforeSending(_ ledger: inout Ledger, replacing version: StateVersion?) async throws -> StateVersion {
        do {
            return try await save(&ledger, replacing: version)
        } catch {
            throw EngineFailure("\(error). Nothing was sent")
        }
    }

    func save(_ ledger: inout Ledger, replacing version: StateVersion?) async throws -> StateVersion {
        try await session.commit(&ledger, to: store, replacing: version)
    }
}

extension ApplyOutcome {
    /// How the run ends once the view has shown the outcome: nil for success, or the failure to exit with.
    package func ending(_ session: Session) -> EngineFailure? {
        if let unsaved { return EngineFailure(unsaved.message(report)) }
        guard let report else { return nil }
        if report.stopRequested, let code = session.stop.exitCode {
            let failed = report.failures.reduce(0) { $0 + $1.registrations.count }
            return EngineFailure(
                "\(session.stop.reason ?? "stopped"): \(report.operationsDone) operation\(report.operationsDone == 1 ? "" : "s") done and recorded, "
                    + "\(report.notAttempted) not attempted\(failed > 0 ? ", \(failed) failed" : ""). Run apply again to continue: "
                    + "it sends only what is left.",
                code: code)
        }
        if report.stopped != nil { return .exit(ExitCodes.error) }
        if !report.succeeded {
            session.notices("Some operations failed; what succeeded is recorded, and re-running apply is safe.")
            return .exit(ExitCodes.partialFailure)
        }
        return nil
    }
}
