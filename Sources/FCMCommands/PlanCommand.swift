import ArgumentParser
import FCMClient
import FCMCore
import FCMState
import FCMViews
import Foundation

struct PlanCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "plan", abstract: "Show what apply would change. Sends no mutating request.")

    @OptionGroup var manifest: ManifestOptions
    @OptionGroup var state: StateOptions
    @OptionGroup var run: RunOptions
    @OptionGroup var locking: LockOptions
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
            try await progressOptions.running("plan") { try await plan(progress: $0) }
        }
    }

    func plan(progress: RunProgress) async throws {
        let console = Console.current
        let pipeline = Pipeline(manifest: manifest, state: state, options: run, format: output.format)
        pipeline.progress = progress
        pipeline.targeting = target.targeting
        pipeline.adoptExisting = adopt.adoptExisting
        let connection = try pipeline.start()
        defer { connection.shutdown() }
        let service = connection.service
        let store = try pipeline.openStore()
        let computed = try await pipeline.withStateLock(store, operation: "plan", options: locking) { _ in
            try await pipeline.compute(service: service, store: store, mode: refresh)
        }
        RunRecord.current?.project = computed.desired.project.id
        let redactor = Redactor(showTokens: run.showTokens)
        PlanTextRenderer.printNotes(computed.plan)
        if let warning = target.warning(Redactor(showTokens: run.showTokens)) { console.err(warning) }
        if refresh == .changed { console.err(computed.refresh.line) }
        try rails.check(computed.plan, redactor: redactor)
        var digest: String?
        if let out {
            let ledger = computed.snapshot.ledger
            // The plan records the project the run addressed (the id from the environment when the manifest
            // names none), so applying it with another project's state or manifest is refused.
            var desired = computed.desired
            desired.project.id = pipeline.project?.id ?? desired.project.id
            var saved = SavedPlan(
                plan: computed.plan, desired: desired, observed: computed.observed, stateSerial: computed.snapshot.version?.serial,
                lineage: ledger.lineage, manifestDigest: pipeline.manifestDigest, manifestPaths: manifest.paths,
                maxRemovals: rails.maxRemovals, fcmctlVersion: FCMCtl.version, createdAt: World.current.now(),
                options: SavedPlan.Options(
                    refresh: refresh.rawValue, adoptExisting: adopt.adoptExisting, targets: target.targets, excludes: target.excludes),
                observedTopics: Set(computed.desired.topics.keys).union(ledger.topics.keys).union(ledger.pending.subscriptions.keys))
            saved.statePath = try pipeline.stateLocation()
            do {
                try SavedPlanDigest.seal(&saved)
                try SavedPlanFile.write(saved, to: out)
            } catch {
                throw fail("\(error)")
            }
            digest = saved.digest
        }
        let palette = output.palette(console: console)
        let text = PlanTextRenderer(
            redactor: redactor, deviceNames: computed.desired.deviceNames, maxMembers: output.maxMembers, palette: palette,
            unchangedRead: computed.refresh.unchangedRead)
        let labeler = RegistrationLabeler(redactor: redactor, deviceNames: computed.desired.deviceNames)
        let out = self.out
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
                        targeting: target.targeting,
                        notices: computed.deprecations)
                },
                markdown: { maxChars in
                    PlanMarkdownRenderer(
                        labeler: labeler, maxChars: maxChars, maxMembers: output.maxMembers, project: computed.desired.project.id, digest: digest
                    )
                    .render(
                        computed.plan, refresh: computed.refresh,
                        extra: computed.deprecations.map { "⚠️ " + $0.message }
                            + (target.warning(Redactor(showTokens: run.showTokens)).map { [String($0.dropFirst(9))] } ?? []))
                },
                annotations: computed.plan.notes))
        pipeline.reportStatistics()
        let unreadable = pipeline.reportUnreadable(computed.observed)
        if unreadable != ExitCodes.success { throw ExitCode(unreadable) }
        if detailedExitcode && computed.plan.hasChanges { throw ExitCode(ExitCodes.changesPresent) }
    }
}

/// `fcmctl show FILE`: a saved plan, as `plan` printed it, with what it was made from.
struct ShowCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "show", abstract: "Print a plan saved by `plan -out FILE`.")

    @Argument(help: "The saved plan.")
    var file: String

    @Flag(help: "Show registrations in full instead of redacted.")
    var showTokens = false

    @OptionGroup var output: OutputOptions

    func run() throws {
        let console = Console.current
        let saved: SavedPlan
        let plan: Plan
        do {
            saved = try SavedPlanFile.read(file)
            plan = try saved.plan()
        } catch {
            throw fail("\(error)")
        }
        let state = saved.stateSerial.map { "serial \($0) of lineage \(saved.lineage)" } ?? "no state yet (lineage \(saved.lineage))"
        var header = ["Saved plan \(file): made \(saved.createdAt.ISO8601Format()) by fcmctl \(saved.fcmctlVersion)"]
        header.append("  manifest: \(saved.manifestPaths.joined(separator: ", ")) (sha256 \(saved.manifestDigest.prefix(16))…)")
        header.append("  state: \(saved.statePath ?? "?"), \(state)")
        header.append(
            "  project: \(saved.project.id) (topic API \(saved.project.topicApi))" + (saved.maxRemovals.map { "; --max-removals \($0)" } ?? ""))
        header.append("  digest: \(saved.digest ?? "none")")
        for note in saved.notes { console.err(note) }
        let redactor = Redactor(showTokens: showTokens)
        let unchangedRead = saved.options.refresh == RefreshMode.all.rawValue
        let text = PlanTextRenderer(
            redactor: redactor, deviceNames: saved.registrationNames, maxMembers: output.maxMembers, palette: output.palette(console: console),
            unchangedRead: unchangedRead)
        let labeler = RegistrationLabeler(redactor: redactor, deviceNames: saved.registrationNames)
        let file = self.file
        try Presenter(options: output, secret: redactor.showTokens).show(
            Presentation(
                text: { header + [""] + text.render(plan) },
                json: { DocumentJSON.savedPlan(saved, plan, path: file, labeler: labeler) },
                markdown: { maxChars in
                    PlanMarkdownRenderer(
                        labeler: labeler, maxChars: maxChars, maxMembers: output.maxMembers, title: "fcmctl plan (saved: \(file))",
                        project: saved.project.id, digest: saved.digest, unchangedRead: unchangedRead
                    )
                    .render(plan, extra: ["Made \(saved.createdAt.ISO8601Format()) from state \(state)."])
                }))
    }
}
