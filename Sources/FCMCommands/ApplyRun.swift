import ArgumentParser
import FCMCore
import FCMEngine
import FCMViews

/// One apply as the command line asked for it: the engine's transaction between the plan shown before
/// and the result shown after. `apply` and `migrate groups --apply` both run it.
struct ApplyRun {
    var manifest: ManifestOptions
    var state: StateOptions
    var run: RunOptions
    var output: OutputOptions
    var lock: Bool
    var lockTimeout: Duration
    var maxRemovals: Int?
    /// What `--target`/`--exclude` (or `migrate groups`) limit the plan to.
    var targeting: PlanTargeting
    var adoptExisting = false
    var autoApprove = false
    var dryRun = false
    var timeout = LockTimeout(duration: .seconds(30 * 60))

    var presentation: ApplyPresentation { ApplyPresentation(output: output, showTokens: run.showTokens) }

    /// Plans from the manifests, the state and FCM, then applies under the state lock.
    func apply(progress: RunProgress) async throws {
        let settings = run.settings(adoptExisting: adoptExisting, targeting: targeting)
        let (session, runTarget) = try RunStart.open(
            manifest: manifest, state: state, settings: settings, format: output.format, progress: progress)
        let connection = try RunStart.connect(session, runTarget)
        defer { connection.shutdown() }
        let store = session.openStore()
        try await surfacing {
            try await session.withStateLock(store, operation: dryRun ? "apply --dry-run" : "apply", lock: lock, timeout: lockTimeout) { lock in
                try await apply(runTarget, transaction: transaction(session, service: connection.service, store: store, lock: lock))
            }
        }
    }

    func transaction(_ session: Session, service: any FCMService, store: any StateStore, lock: StateLock?) -> ApplyTransaction {
        var transaction = ApplyTransaction(session: session, service: service, store: store, lock: lock)
        transaction.timeout = timeout.duration
        transaction.timeoutText = timeout.text
        transaction.confirm = { [autoApprove] in try ApplyConfirmation.ask(autoApprove: autoApprove) }
        return transaction
    }

    func apply(_ runTarget: RunTarget, transaction: ApplyTransaction) async throws {
        let session = transaction.session
        var computed = try await session.computePlan(
            runTarget.desired, service: transaction.service, store: transaction.store, manifest: runTarget.manifest,
            // Only where nobody reviews the plan before it is sent (a merge job): a person confirming, or a dry run's
            // preview, is shown the plan as `plan` makes it, read first.
            unreadCreates: autoApprove && !dryRun)
        if let refusal = RemovalLimit.refusal(computed.plan, limit: maxRemovals) { computed.plan.refusals.append(refusal) }
        RunRecord.current?.project = computed.desired.project.id
        session.progress.planned(computed.plan)
        PlanTextRenderer.printNotes(computed.plan)
        if let warning = targeting.warning(Redactor(showTokens: run.showTokens)) { Console.current.say(.warning(warning)) }
        presentation.printPlan(computed.plan, deviceNames: computed.desired.deviceNames)
        if !computed.plan.refusals.isEmpty {
            let redactor = Redactor(showTokens: run.showTokens)
            if output.format == .github {
                Console.current.out(lines: GitHubAnnotations.lines(computed.plan.refusalDiagnostics(redactor), redactor: redactor, command: "apply"))
            }
            // The documents have no apply to report: the refused plan is the document, as `plan` shows it.
            if output.format == .json || output.format == .markdown {
                try PlanPresentation(
                    computed: computed, output: output, showTokens: run.showTokens, savedTo: nil, digest: nil, targeting: targeting,
                    targetWarning: nil, title: "fcmctl apply (refused)"
                ).show()
            }
            if let refusal = RefusedPlan.ending(computed.plan, showTokens: run.showTokens) { throw refusal }
        }
        if dryRun {
            DryRunRequests(console: Console.current, redactor: Redactor(showTokens: run.showTokens)).print(computed, service: transaction.service)
            return
        }
        let unreadable = session.reportUnreadable(computed.observed)
        // A partial apply leaves other objects as they were: the manifest as a whole was not applied.
        let outcome = try await transaction.execute(computed, declared: targeting.isPartial ? nil : computed.desired)
        try finish(outcome, session: session)
        if unreadable != ExitCodes.success { throw ExitCode(unreadable) }
    }

    /// Shows the outcome, then ends as it says.
    func finish(_ outcome: ApplyOutcome, session: Session) throws {
        try presentation.showResult(outcome)
        if outcome.report != nil { session.reportStatistics() }
        if let failure = outcome.ending(session) { throw failure }
    }
}
