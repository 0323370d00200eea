import ArgumentParser
import FCMClient
import FCMCore
import FCMState
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

    func run() async throws {
        let console = Console.current
        let pipeline = Pipeline(manifest: manifest, state: state, options: run)
        let connection = try pipeline.start()
        defer { connection.shutdown() }
        let service = connection.service
        let store = pipeline.openStore()
        let computed = try await pipeline.withStateLock(store, operation: "plan", options: locking) { _ in
            try await pipeline.compute(service: service, store: store)
        }
        let redactor = Redactor(showTokens: run.showTokens)
        PlanTextRenderer.printNotes(computed.plan)
        for line in PlanTextRenderer(redactor: redactor, deviceNames: computed.desired.deviceNames).render(computed.plan) {
            console.out(line)
        }
        pipeline.reportStatistics()
        try rails.check(computed.plan, redactor: redactor)
        if let out {
            var saved = SavedPlan(
                plan: computed.plan, desired: computed.desired, observed: computed.observed, stateSerial: computed.snapshot.version?.serial,
                lineage: computed.snapshot.ledger.lineage, manifestDigest: pipeline.manifestDigest, manifestPaths: manifest.paths,
                maxRemovals: rails.maxRemovals, fcmctlVersion: FCMCtl.version, createdAt: World.current.now())
            saved.statePath = pipeline.resolvedStatePath
            do {
                try SavedPlanFile.write(saved, to: out)
            } catch {
                throw fail("\(error)")
            }
            console.out("")
            console.out("Saved this plan to \(out). Apply exactly it with: fcmctl apply \(out)")
        }
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
        console.out("Saved plan \(file): made \(saved.createdAt.ISO8601Format()) by fcmctl \(saved.fcmctlVersion)")
        console.out("  manifest: \(saved.manifestPaths.joined(separator: ", ")) (sha256 \(saved.manifestDigest.prefix(16))…)")
        console.out("  state: \(saved.statePath ?? "?"), \(state)")
        console.out(
            "  project: \(saved.project.id) (topic API \(saved.project.topicApi))"
                + (saved.maxRemovals.map { "; --max-removals \($0)" } ?? ""))
        console.out("")
        for note in saved.notes { console.err(note) }
        for line in PlanTextRenderer(redactor: Redactor(showTokens: showTokens), deviceNames: saved.registrationNames).render(plan) {
            console.out(line)
        }
    }
}
