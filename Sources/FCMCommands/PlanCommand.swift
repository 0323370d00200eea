import ArgumentParser
import FCMCore
import FCMEngine
import FCMViews

struct PlanCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "plan", abstract: "Show what apply would change. Sends no mutating request.")

    @OptionGroup var manifest: ManifestOptions
    @OptionGroup var state: StateOptions
    @OptionGroup var run: RunOptions
    @OptionGroup var locking: ReadOnlyLockOptions
    @OptionGroup var rails: RemovalRails

    @Flag(help: "Exit 0 when there are no changes, 2 when there are.")
    var detailedExitcode = false

    @Option(
        name: [.customLong("out", withSingleDash: true), .customLong("out")],
        help: ArgumentHelp("Save the plan to FILE (mode 0600): `fcmctl apply FILE` runs exactly it, or exits 5 if it went stale.", valueName: "file"))
    var out: String?

    @OptionGroup var output: OutputOptions
    @OptionGroup var progressOptions: ProgressOptions
    @OptionGroup var target: TargetOptions
    @OptionGroup var adopt: AdoptOptions

    @Option(
        help:
            "all: read every registration and group fcmctl knows (the default). changed: only those whose declaration differs from the last apply, for fast pull-request plans."
    )
    var refresh: RefreshMode = .all

    func run() async throws {
        try await ErrorDocument.guarding("plan", output: output, showTokens: run.showTokens) {
            try await progressOptions.running("plan", format: output.format) { try await plan(progress: $0) }
        }
    }

    func plan(progress: RunProgress) async throws {
        let console = Console.current
        let settings = run.settings(adoptExisting: adopt.adoptExisting, targeting: target.targeting)
        // A changed-only plan names the devices of the shards it reads, not every device the manifests declare.
        let (session, runTarget) = try RunStart.open(
            manifest: manifest, state: state, settings: settings, format: output.format, progress: progress, namingDevices: refresh != .changed)
        let connection = try RunStart.connect(session, runTarget)
        defer { connection.shutdown() }
        let store = session.openStore()
        // plan only reads: no lock, no write of any kind, so it runs with read-only credentials. The state is read
        // as one generation with its journal (the store reads again if a writer replaced it meanwhile), and a
        // plan saved from it is refused by apply if the state moved on.
        var computed = try await surfacing {
            try await session.computePlan(runTarget.desired, service: connection.service, store: store, mode: refresh, manifest: runTarget.manifest)
        }
        console.err(StateReadLine.text(store: store, version: computed.snapshot.version))
        if let refusal = RemovalLimit.refusal(computed.plan, limit: rails.maxRemovals) { computed.plan.refusals.append(refusal) }
        RunRecord.current?.project = computed.desired.project.id
        session.progress.planned(computed.plan)
        PlanTextRenderer.printNotes(computed.plan)
        if let warning = target.warning(Redactor(showTokens: run.showTokens)) { console.say(.warning(warning)) }
        if refresh == .changed { console.err(computed.refresh.line) }
        // A refused plan is shown, never saved: there is nothing in it to apply.
        let refused = !computed.plan.refusals.isEmpty
        if refused, let out { console.err("The plan was not saved to \(out): it is refused.") }
        let digest = refused ? nil : try out.flatMap { try save(computed, to: $0, target: runTarget) }
        try PlanPresentation(
            computed: computed, output: output, showTokens: run.showTokens, savedTo: refused ? nil : out, digest: digest, targeting: target.targeting,
            targetWarning: target.warning(Redactor(showTokens: run.showTokens))
        ).show()
        session.reportStatistics()
        if let refusal = RefusedPlan.ending(computed.plan, showTokens: run.showTokens) { throw refusal }
        let unreadable = session.reportUnreadable(computed.observed)
        if unreadable != ExitCodes.success { throw ExitCode(unreadable) }
        if detailedExitcode && computed.plan.hasChanges { throw ExitCode(ExitCodes.changesPresent) }
    }

    /// `-out FILE`: the plan as a sealed file; returns its digest.
    func save(_ computed: ComputedPlan, to path: String, target runTarget: RunTarget) throws -> String? {
        let ledger = computed.snapshot.ledger
        // The plan records the project the run addressed (the id from the environment when the manifest
        // names none), so applying it with another project's state or manifest is refused.
        var desired = computed.desired
        desired.project.id = runTarget.project.id
        var saved = SavedPlan(
            plan: computed.plan, desired: desired, observed: computed.observed, stateSerial: computed.snapshot.version?.serial,
            lineage: ledger.lineage, manifestDigest: runTarget.manifestDigest, manifestPaths: manifest.paths,
            maxRemovals: rails.maxRemovals, fcmctlVersion: FCMCtl.version, createdAt: World.current.now(),
            options: SavedPlan.Options(
                refresh: refresh.rawValue, adoptExisting: adopt.adoptExisting, targets: target.targets, excludes: target.excludes),
            observedTopics: Set(computed.desired.topics.keys).union(ledger.topics.keys).union(ledger.pending.subscriptions.keys),
            notes: computed.plan.notes.map(\.headline))
        saved.statePath = runTarget.statePath
        do {
            try SavedPlanDigest.seal(&saved)
            try SavedPlanFile.write(saved, to: path)
        } catch {
            throw fail("\(error)")
        }
        return saved.digest
    }
}
