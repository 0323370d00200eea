import ArgumentParser
import FCMClient
import FCMCore
import FCMReconcile
import FCMState
import Foundation

struct ApplyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "apply", abstract: "Make FCM match the manifests. Safe to re-run.")

    @OptionGroup var manifest: ManifestOptions
    @OptionGroup var state: StateOptions
    @OptionGroup var run: RunOptions

    @Flag(help: "Do not ask for confirmation.")
    var autoApprove = false

    @Flag(help: "Print the exact requests apply would send, and send none of them.")
    var dryRun = false

    @Option(
        help: ArgumentHelp(
            "Stop sending after this long (e.g. 45m, 2h; 0: no limit), write the state and exit 3; re-running continues. Default: 30m.",
            valueName: "duration"))
    var timeout: LockTimeout = LockTimeout(duration: .seconds(30 * 60))

    @OptionGroup var locking: LockOptions
    @OptionGroup var rails: RemovalRails
    @OptionGroup var output: OutputOptions
    @OptionGroup var progressOptions: ProgressOptions
    @OptionGroup var target: TargetOptions
    @OptionGroup var adopt: AdoptOptions

    @Argument(help: "A plan saved by `plan -out FILE`: apply exactly its operations, or exit 5 if what it was made from has changed.")
    var planFile: String?

    @Option(
        help: ArgumentHelp(
            "Apply the saved plan only if its digest is this one (`sha256:…`, as `plan -out` printed it): the merge job runs only the approved plan.",
            valueName: "digest"))
    var expectDigest: String?

    func validate() throws {
        if expectDigest != nil && planFile == nil { throw ValidationError("--expect-digest checks a saved plan: pass its FILE too") }
        if planFile != nil && dryRun { throw ValidationError("--dry-run applies to a fresh plan; use `fcmctl show FILE` to read a saved one") }
        if planFile != nil && target.targeting.isPartial {
            throw ValidationError("--target and --exclude shape a fresh plan; a saved plan already holds exactly what it will do")
        }
        if dryRun && output.format != .text {
            throw ValidationError(
                "--dry-run prints requests as text; for a machine-readable plan use `fcmctl plan --format \(output.format.rawValue)`")
        }
    }

    func run() async throws {
        try await ErrorDocument.guarding("apply", output: output, showTokens: run.showTokens) {
            try await progressOptions.running("apply") { try await run(progress: $0) }
        }
    }

    func run(progress: RunProgress) async throws {
        if let planFile {
            try await SavedPlanApply(command: self, path: planFile, progress: progress).run()
            return
        }
        let pipeline = Pipeline(manifest: manifest, state: state, options: run, format: output.format)
        pipeline.progress = progress
        pipeline.targeting = target.targeting
        pipeline.adoptExisting = adopt.adoptExisting
        let connection = try pipeline.start()
        defer { connection.shutdown() }
        let service = connection.service
        let store = try pipeline.openStore()
        try await pipeline.withStateLock(store, operation: dryRun ? "apply --dry-run" : "apply", options: locking) { lock in
            try await apply(pipeline: pipeline, service: service, store: store, lock: lock)
        }
    }

    func apply(pipeline: Pipeline, service: any FCMService, store: any StateStore, lock: StateLock?) async throws {
        let console = Console.current
        let redactor = Redactor(showTokens: run.showTokens)
        let computed = try await pipeline.compute(service: service, store: store)
        RunRecord.current?.project = computed.desired.project.id
        PlanTextRenderer.printNotes(computed.plan)
        if let warning = target.warning(Redactor(showTokens: run.showTokens)) { console.err(warning) }
        printPlan(computed.plan, deviceNames: computed.desired.deviceNames)
        try rails.check(computed.plan, redactor: redactor)
        if dryRun {
            printRequests(computed, service: service, redactor: redactor)
            return
        }
        let unreadable = pipeline.reportUnreadable(computed.observed)
        try await execute(
            computed.plan, observed: computed.observed, ledger: computed.ledger, snapshot: computed.snapshot, desired: computed.desired,
            // A partial apply leaves other objects as they were: the manifest as a whole was not applied.
            pipeline: pipeline, service: service, store: store, lock: lock, declared: target.targeting.isPartial ? nil : computed.desired)
        if unreadable != ExitCodes.success { throw ExitCode(unreadable) }
    }

    /// Carries out `plan` on `ledger` (already aligned with what FCM reported): the state is written before
    /// the first request and after the last, every request journaled as an intent first. `unchangedRead` is
    /// false for a saved plan made with `--refresh=changed`, whose topics' unchanged counts were not read.
    func execute(
        _ plan: Plan, observed: ObservedState, ledger aligned: Ledger, snapshot: StateSnapshot, desired: DesiredState, pipeline: Pipeline,
        service: any FCMService, store: any StateStore, lock: StateLock?, declared: DesiredState?, unchangedRead: Bool = true
    ) async throws {
        let console = Console.current
        var ledger = aligned
        ledger.recordProtection(from: desired)
        // A state written by this run is this project's: an old state without a project is bound here.
        if let project = pipeline.project { ledger.bind(to: project) }
        var version = snapshot.version
        if !plan.hasChanges {
            if let declared { ledger.recordApplied(declared, unsettled: observed.unreadable.keys) }
            let changed = !ledger.hasSameRecords(as: snapshot.ledger) || snapshot.needsWrite
            // Recovered records and FCM's corrections are saved even when there is nothing to send.
            if changed || version == nil { version = try await saveBeforeSending(&ledger, store: store, replacing: version) }
            try showResult(
                plan, report: nil, state: (store.displayName, ledger.serial), desired: desired, notices: pipeline.deprecations,
                unchangedRead: unchangedRead)
            return
        }
        try confirm()
        // Written first: it folds in any journal of an earlier run and proves the state can be written,
        // before the first request.
        version = try await saveBeforeSending(&ledger, store: store, replacing: version)
        let operations = plan.groups.reduce(0) { $0 + $1.steps.count } + plan.topics.reduce(0) { $0 + $1.added.count + $1.removed.count }
        let journal: any StateJournal
        do {
            journal = try await store.openJournal(base: version!, expectedBytes: JournalBudget.bytes(for: plan))
        } catch {
            throw fail("\(error)")
        }
        let started = ContinuousClock.now
        let progress = pipeline.progress
        progress.beginPhase("Applying", total: operations)
        let stop = pipeline.stop
        // From here a signal stops the sending and lets this run write its state, instead of ending the process.
        Interruption.draining(stop)
        defer { Interruption.finished() }
        let deadline = startDeadline(pipeline)
        let (report, applied) = await Applier(
            service: service, limit: pipeline.concurrency, executor: pipeline.executor, progress: { progress.advance($0) }
        )
        .apply(plan, observed: observed, ledger: ledger, journal: journal, lock: lock, stop: stop)
        deadline?.cancel()
        Interruption.sendingEnded()
        progress.endPhase()
        for (address, count) in report.completed.sorted(by: { $0.key < $1.key }) {
            progress.object(address: address, status: "done", operations: count)
        }
        for outcome in report.outcomes {
            let status =
                switch outcome.status {
                case .gone: "gone"
                case .failed: "failed"
                case .notAttempted: "not_attempted"
                }
            progress.object(address: outcome.address, status: status, operations: outcome.registrations.count)
        }
        if run.verbose {
            let seconds = Pipeline.seconds(since: started)
            let changes = plan.summary.subscriptionsToAdd + plan.summary.subscriptionsToRemove
            console.err(
                String(
                    format: "Applied %d subscription changes in %.2f s (%.0f changes/s); journal %d bytes.", changes, seconds,
                    Double(changes) / max(seconds, 0.001), await journal.bytesWritten))
        }
        ledger = applied
        if let declared {
            let unsettled = report.outcomes.filter { if case .gone = $0.status { false } else { true } }
            ledger.recordApplied(
                declared, unsettled: unsettled.flatMap(\.registrations) + observed.unreadable.keys, unsettledGroups: unsettled.map(\.address))
        }
        var saveError: (any Error)?
        do {
            version = try await save(&ledger, store: store, replacing: version)
        } catch {
            saveError = error
        }
        try showResult(
            plan, report: report, state: (store.displayName, saveError == nil ? ledger.serial : nil), desired: desired,
            notices: pipeline.deprecations, unchangedRead: unchangedRead)
        pipeline.reportStatistics()
        if let saveError {
            throw fail("\(saveError). Every completed operation is in \(store.journalDisplayName); the next run folds it in")
        }
        if report.stopRequested, let code = stop.exitCode {
            let failed = report.failures.reduce(0) { $0 + $1.registrations.count }
            console.err(
                "error: \(stop.reason ?? "stopped"): \(report.operationsDone) operation\(report.operationsDone == 1 ? "" : "s") done and recorded, "
                    + "\(report.notAttempted) not attempted\(failed > 0 ? ", \(failed) failed" : ""). Run apply again to continue: "
                    + "it sends only what is left.")
            throw ExitCode(code)
        }
        if report.stopped != nil { throw ExitCode(ExitCodes.error) }
        if !report.succeeded {
            console.err("Some operations failed; what succeeded is recorded, and re-running apply is safe.")
            throw ExitCode(ExitCodes.partialFailure)
        }
    }

    /// `--timeout`, counted from the start of the command: when it passes, the apply stops sending as it
    /// would for a signal, and ends with exit 3.
    func startDeadline(_ pipeline: Pipeline) -> Task<Void, Never>? {
        guard timeout.duration > .zero else { return nil }
        let remaining = timeout.duration - (ContinuousClock.now - pipeline.started)
        let stop = pipeline.stop
        let text = timeout.text
        return Task {
            if remaining > .zero {
                do { try await Task.sleep(for: remaining) } catch { return }
            }
            stop.request("apply reached its --timeout of \(text)", exitCode: ExitCodes.partialFailure)
        }
    }

    /// Text prints the plan before asking; the other formats are one document at the end.
    func printPlan(_ plan: Plan, deviceNames: [Registration: String], unchangedRead: Bool = true) {
        guard output.format == .text || output.format == .github else { return }
        let redactor = Redactor(showTokens: run.showTokens)
        let text = PlanTextRenderer(
            redactor: redactor, deviceNames: deviceNames, maxMembers: output.maxMembers, palette: output.palette(console: Console.current),
            unchangedRead: unchangedRead)
        Console.current.out(lines: text.render(plan))
    }

    /// The result in the chosen format: what was done per object, what was skipped or failed, the state.
    func showResult(
        _ plan: Plan, report: ApplyReport?, state: (path: String, serial: Int?), desired: DesiredState, notices: [DeprecationNotice] = [],
        unchangedRead: Bool = true
    ) throws {
        let console = Console.current
        let redactor = Redactor(showTokens: run.showTokens)
        let labeler = RegistrationLabeler(redactor: redactor, deviceNames: desired.deviceNames)
        let stateLine =
            state.serial.map { "State: \(state.path) (serial \($0))." } ?? "The state could not be written; its journal keeps every record."
        var problems: [String] = []
        var text: [String] = []
        if let report {
            let rendered = ApplyTextRenderer(labeler: labeler).render(report)
            problems = rendered.err
            text = [""] + rendered.out + [ApplyTextRenderer.summary(report) + " " + stateLine]
        } else {
            text = [stateLine]
        }
        // Skipped and failed operations are diagnostics: stderr in text, inside the document otherwise.
        if output.format == .text || output.format == .github { for line in problems { console.err(line) } }
        let annotations = problems.map { line -> Diagnostic in
            line.hasPrefix("error: ") ? .error(String(line.dropFirst(7))) : .warning(line.replacingOccurrences(of: "warning: ", with: ""))
        }
        try Presenter(options: output, command: "apply", secret: redactor.showTokens).show(
            Presentation(
                text: { text },
                json: {
                    DocumentJSON.apply(
                        plan, report: report, labeler: labeler, desired: desired, state: state, notices: notices, unchangedRead: unchangedRead)
                },
                markdown: { maxChars in
                    let result = report.map { ApplyTextRenderer.summary($0) } ?? "Nothing to change."
                    return PlanMarkdownRenderer(
                        labeler: labeler, maxChars: maxChars, maxMembers: output.maxMembers, title: "fcmctl apply", project: desired.project.id,
                        unchangedRead: unchangedRead
                    )
                    .render(plan, extra: notices.map { "⚠️ " + $0.message } + [result + " " + stateLine] + problems.prefix(20))
                },
                annotations: annotations))
    }

    func saveBeforeSending(_ ledger: inout Ledger, store: any StateStore, replacing version: StateVersion?) async throws -> StateVersion {
        do {
            return try await save(&ledger, store: store, replacing: version)
        } catch {
            throw fail("\(error). Nothing was sent")
        }
    }

    /// Writes the ledger as the next serial of what was read; returns the new version.
    func save(_ ledger: inout Ledger, store: any StateStore, replacing version: StateVersion?) async throws -> StateVersion {
        ledger.serial = try ledger.nextSerial()
        return try await store.write(ledger, replacing: version)
    }

    func confirm() throws {
        let console = Console.current
        if autoApprove { return }
        guard console.isInteractive else {
            throw fail("apply needs confirmation: standard input is not a terminal, so pass --auto-approve")
        }
        console.writeOut("\nApply these changes? Only 'yes' is accepted: ")
        guard console.readLine()?.trimmingCharacters(in: .whitespaces) == "yes" else {
            throw fail("apply cancelled; nothing was changed")
        }
    }

    func printRequests(_ computed: Pipeline.Computed, service: any FCMService, redactor: Redactor) {
        let console = Console.current
        guard computed.plan.hasChanges else { return }
        console.out("")
        console.out("Dry run: apply would send these requests, in this order (nothing was sent):")
        for change in computed.plan.groups {
            let key = computed.observed.groups[change.name].map { redactor.redact($0.notificationKey) }
            for step in change.steps {
                for request in service.preview(step, name: change.name, key: key) {
                    console.out("  \(RequestPreviewText(redactor: redactor).line(request))")
                }
            }
        }
        // The order apply uses: every addition, then the removals.
        let size = service.topicBatchSize
        for action in [SubscriptionChange.Action.subscribe, .unsubscribe] {
            for batch in Applier.batches(computed.plan.topics, action, size: size) {
                for request in service.previewBatch(topic: batch.topic, action: batch.action, Array(batch.registrations)) {
                    console.out("  \(RequestPreviewText(redactor: redactor).line(request))")
                }
            }
        }
    }
}
