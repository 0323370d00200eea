import ArgumentParser
import FCMCore
import FCMManifest
import FCMReconcile
import FCMState
import Foundation

/// `apply FILE`: the reviewed plan, exactly, or nothing. Under the lock it checks that the state is the one
/// the plan was made from, that the manifest is unchanged, and re-reads from FCM only what the plan touches;
/// anything that moved is exit 5, naming it, with nothing sent.
struct SavedPlanApply {
    let command: ApplyCommand
    let path: String
    let progress: RunProgress

    func run() async throws {
        let console = Console.current
        let saved: SavedPlan
        let plan: Plan
        do {
            saved = try SavedPlanFile.read(path)
            plan = try saved.plan()
        } catch {
            throw fail("\(error)")
        }
        let manifestPaths = command.manifest.manifests.isEmpty ? saved.manifestPaths : command.manifest.manifests
        var stateOptions = command.state
        if stateOptions.state == nil, command.manifest.manifests.isEmpty, let recorded = saved.statePath { stateOptions.state = recorded }
        let pipeline = Pipeline(manifest: ManifestOptions(manifests: manifestPaths), state: stateOptions, options: command.run)
        pipeline.progress = progress
        let declared = try checkManifest(saved, paths: manifestPaths, pipeline: pipeline)
        let connection = try pipeline.connect(project: saved.projectSettings)
        defer { connection.shutdown() }
        let store = pipeline.openStore()
        let redactor = Redactor(showTokens: command.run.showTokens)
        command.printPlan(plan, deviceNames: saved.registrationNames)
        try command.rails.check(plan, redactor: redactor, limit: [saved.maxRemovals, command.rails.maxRemovals].compactMap { $0 }.min())
        try await pipeline.withStateLock(store, operation: "apply \((path as NSString).lastPathComponent)", options: command.locking) { lock in
            let snapshot = try await pipeline.readState(store)
            try checkState(saved, snapshot: snapshot, store: store)
            console.err("Re-reading what the plan touches: \(plan.groups.count) group(s) and the registrations of \(plan.topics.count) topic(s)…")
            let observed: ObservedState
            do {
                observed = try await Refresher(service: connection.service, limit: pipeline.concurrency).refresh(touchedBy: plan)
            } catch {
                throw fail("re-reading FCM failed: \(error). Nothing was sent")
            }
            let now = PlanFingerprint.facts(of: plan, observed: observed)
            let moved = saved.fingerprints.keys.filter { saved.fingerprints[$0] != now[$0] }.sorted()
            if !moved.isEmpty {
                throw fail(
                    "the saved plan is stale: \(moved.prefix(10).joined(separator: ", "))\(moved.count > 10 ? " and \(moved.count - 10) more" : "") "
                        + "changed in FCM since it was made. Nothing was sent; run plan again", code: ExitCodes.stalePlan)
            }
            var ledger = snapshot.ledger
            if snapshot.version == nil { ledger = Ledger(lineage: saved.lineage, serial: 0) }
            // The reviewed plan changes a group only if it was fcmctl's (or adopted) when the plan was made.
            let desired = saved.desiredForApply
            try await command.execute(
                plan, observed: observed, ledger: ledger.aligned(with: observed, desired: desired, adoptExisting: true), snapshot: snapshot,
                desired: desired,
                pipeline: pipeline, service: connection.service, store: store, lock: lock, declared: declared)
        }
    }

    /// The manifest the plan was made from, if it is here to compare: a different one is exit 5. Returns
    /// what it declares, which the state records as applied once the plan ran.
    func checkManifest(_ saved: SavedPlan, paths: [String], pipeline: Pipeline) throws -> DesiredState? {
        guard paths.allSatisfy({ FileManager.default.fileExists(atPath: $0) }) else {
            Console.current.err("warning: the manifest \(paths.joined(separator: ", ")) is not here, so it was not compared with the plan's")
            return nil
        }
        let result = ManifestLoader().load(paths: paths)
        let digest = ManifestDigest.of(result.sources)
        guard digest == saved.manifestDigest else {
            throw fail(
                "the saved plan is stale: the manifest \(paths.joined(separator: ", ")) changed since the plan was made. Nothing was sent; run plan again",
                code: ExitCodes.stalePlan)
        }
        guard let manifest = result.manifest, let resolution = result.resolution else { return nil }
        return manifest.desiredState(resolution)
    }

    func checkState(_ saved: SavedPlan, snapshot: StateSnapshot, store: any StateStore) throws {
        if let version = snapshot.version, version.lineage != saved.lineage {
            throw fail(
                "the plan was made for state lineage \(saved.lineage), but \(store.displayName) is lineage \(version.lineage): it belongs to another state. Nothing was sent"
            )
        }
        let serialNow = snapshot.version?.serial
        if serialNow != saved.stateSerial || snapshot.replayedEntries > 0 {
            let was = saved.stateSerial.map { "serial \($0)" } ?? "no state"
            let now = serialNow.map { "serial \($0)" } ?? "no state"
            let why =
                snapshot.replayedEntries > 0
                ? "an interrupted run left records to fold in" : "the state moved from \(was) to \(now) (another apply ran)"
            throw fail("the saved plan is stale: \(why). Nothing was sent; run plan again", code: ExitCodes.stalePlan)
        }
    }
}
