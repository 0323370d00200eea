import ArgumentParser
import FCMCore
import FCMManifest
import FCMReconcile
import FCMState
import Foundation

/// `apply FILE`: the reviewed plan, exactly, or nothing. A plan file passes through CI storage, so nothing in
/// it is taken on its word: its digest must match its content (and `--expect-digest`, the approved one); the
/// manifest must be the one it was made from; under the lock the state must be the one it was made from; the
/// operations are computed again from the manifest, the state and the observations the plan carries, and must
/// be the saved ones exactly; and what the operations touch is re-read from FCM and must be as observed.
/// Anything else is exit 5, naming what differs, with nothing sent and no state written.
struct SavedPlanApply {
    let command: ApplyCommand
    let path: String
    let progress: RunProgress

    func stale(_ why: String) -> ExitCode {
        fail("the saved plan is refused: \(why). Nothing was sent; run plan again", code: ExitCodes.stalePlan)
    }

    func run() async throws {
        let console = Console.current
        let saved: SavedPlan
        do {
            saved = try SavedPlanFile.read(path)
        } catch let outdated as SavedPlanFile.Outdated {
            throw fail(outdated.description, code: ExitCodes.stalePlan)
        } catch {
            throw fail("\(error)")
        }
        RunRecord.current?.project = saved.project.id
        if let mismatch = SavedPlanDigest.mismatch(saved) { throw stale(mismatch) }
        if let expected = command.expectDigest, SavedPlanDigest.normalized(expected) != saved.digest {
            throw stale("its digest is \(saved.digest ?? "missing"), not the approved \(SavedPlanDigest.normalized(expected))")
        }
        let plan: Plan
        let targeting: PlanTargeting
        do {
            plan = try saved.plan()
            targeting = try saved.options.targeting()
        } catch {
            throw stale("\(error)")
        }
        let manifestPaths = command.manifest.manifests.isEmpty ? saved.manifestPaths : command.manifest.manifests
        var stateOptions = command.state
        if stateOptions.state == nil, command.manifest.manifests.isEmpty, let recorded = saved.statePath { stateOptions.state = recorded }
        let pipeline = Pipeline(manifest: ManifestOptions(manifests: manifestPaths), state: stateOptions, options: command.run)
        pipeline.progress = progress
        let (desired, declaredState) = try checkManifest(saved, paths: manifestPaths)
        // With -f, the state is where that manifest says (as for `plan`); without, where the plan recorded it.
        if stateOptions.state == nil, let declaredState { pipeline.overrideStatePath(declaredState) }
        pipeline.project = Pipeline.project(of: desired.project)
        let store = try pipeline.openStore()
        let connection = try pipeline.connect(project: desired.project)
        defer { connection.shutdown() }
        let redactor = Redactor(showTokens: command.run.showTokens)
        let unchangedRead = saved.options.refresh == RefreshMode.all.rawValue
        command.printPlan(plan, deviceNames: saved.registrationNames, unchangedRead: unchangedRead)
        try command.rails.check(plan, redactor: redactor, limit: [saved.maxRemovals, command.rails.maxRemovals].compactMap { $0 }.min())
        try await pipeline.withStateLock(store, operation: "apply \((path as NSString).lastPathComponent)", options: command.locking) { lock in
            let snapshot = try await pipeline.readState(store)
            // The plan's project is the manifest's (checked above): a state of another project makes the plan
            // one that cannot be applied here, exit 5 like any plan that does not fit what it meets.
            try pipeline.checkProject(snapshot, store: store, code: ExitCodes.stalePlan, prefix: "the saved plan is refused: ")
            try checkState(saved, snapshot: snapshot, store: store)
            let recorded = try rederive(saved, plan, desired: desired, ledger: snapshot.ledger, targeting: targeting)
            console.err("Re-reading what the plan touches: \(plan.groups.count) group(s) and the registrations of \(plan.topics.count) topic(s)…")
            var observed: ObservedState
            do {
                observed = try await Refresher(service: connection.service, limit: pipeline.concurrency, executor: connection.executor).refresh(
                    touchedBy: plan)
            } catch {
                throw fail("re-reading FCM failed: \(error). Nothing was sent")
            }
            observed.fillUnreadMembers(from: snapshot.ledger)
            let expected = PlanFingerprint.facts(of: plan, observed: recorded)
            let now = PlanFingerprint.facts(of: plan, observed: observed)
            let moved = expected.keys.filter { expected[$0] != now[$0] }.sorted()
            if !moved.isEmpty {
                throw fail(
                    "the saved plan is stale: \(listed(moved)) changed in FCM since it was made. Nothing was sent; run plan again",
                    code: ExitCodes.stalePlan)
            }
            var ledger = snapshot.ledger
            if snapshot.version == nil { ledger = Ledger(lineage: saved.lineage, serial: 0) }
            // The reviewed plan changes a group only if it was fcmctl's (or adopted) when the plan was made.
            let forApply = saved.desiredForApply
            try await command.execute(
                plan, observed: observed, ledger: ledger.aligned(with: observed, desired: forApply, adoptExisting: true), snapshot: snapshot,
                desired: forApply, pipeline: pipeline, service: connection.service, store: store, lock: lock,
                // A targeted plan leaves other objects as they were: the manifest as a whole was not applied.
                declared: targeting.isPartial ? nil : desired, unchangedRead: unchangedRead)
        }
    }

    func listed(_ addresses: [String]) -> String {
        addresses.prefix(10).joined(separator: ", ") + (addresses.count > 10 ? " and \(addresses.count - 10) more" : "")
    }

    /// The manifest the plan was made from must be here: the operations are computed again from it. Returns
    /// what it declares, and where it says the state is (`state:`), if it does.
    func checkManifest(_ saved: SavedPlan, paths: [String]) throws -> (DesiredState, String?) {
        guard paths.allSatisfy({ FileManager.default.fileExists(atPath: $0) }) else {
            throw stale("the manifest \(paths.joined(separator: ", ")) is not here, so the plan's operations cannot be checked against it")
        }
        let result = ManifestLoader().load(paths: paths)
        guard ManifestDigest.of(result.sources) == saved.manifestDigest else {
            throw fail(
                "the saved plan is stale: the manifest \(paths.joined(separator: ", ")) changed since the plan was made. Nothing was sent; run plan again",
                code: ExitCodes.stalePlan)
        }
        guard let manifest = result.manifest, let resolution = result.resolution else {
            DiagnosticPrinter(sources: result.sources, format: .text).print(result.diagnostics)
            throw fail("the manifest has errors; nothing was sent to FCM")
        }
        let desired = manifest.desiredState(resolution)
        // The id as the run addresses it, as `plan -out` recorded it: a manifest without `project.id` is for
        // the project GOOGLE_CLOUD_PROJECT (or the key) names, and that must not change between plan and apply.
        var settings = desired.project
        settings.id = Pipeline.project(of: settings).id
        let project = SavedPlan.Project(settings)
        if project != saved.project {
            throw stale(
                "it is for project \(saved.project.id) (sender \(saved.project.senderId), topic API \(saved.project.topicApi)), "
                    + "but the manifest says \(project.id) (sender \(project.senderId), topic API \(project.topicApi))")
        }
        return (desired, manifest.state?.resolvedLocation)
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

    /// Computes the operations again, as `plan` did, from the manifest, the state as read and the plan's
    /// observations, and refuses unless they are the saved ones exactly. The observations must cover
    /// exactly what the planner would have read, so none can be invented for a registration the manifest
    /// and the state do not know. Returns the observations, which the live re-read is compared with.
    func rederive(_ saved: SavedPlan, _ plan: Plan, desired: DesiredState, ledger: Ledger, targeting: PlanTargeting) throws -> ObservedState {
        guard let mode = RefreshMode(rawValue: saved.options.refresh) else {
            throw stale("it names an unknown refresh mode '\(saved.options.refresh)'")
        }
        let observed: ObservedState
        do {
            observed = try saved.observations.observedState()
        } catch {
            throw stale("\(error)")
        }
        let scope = RefreshScope(desired: desired, ledger: ledger, mode: mode)
        let read = Set(observed.registrations.keys).union(observed.unreadable.keys)
        if read != scope.registrations {
            let invented = read.subtracting(scope.registrations).count
            let missing = scope.registrations.subtracting(read).count
            throw stale(
                "its observations do not cover what the manifest and the state name (\(invented) registration(s) neither names, "
                    + "\(missing) missing)")
        }
        let checked = mode == .all ? nil : scope.groups
        if observed.checkedGroups != checked || !Set(observed.groups.keys).isSubset(of: scope.groups) {
            throw stale("its observed groups are not the groups the manifest and the state name")
        }
        if saved.declaredGroups != desired.groups.mapValues(\.protect) {
            throw stale("its declared groups (or their protection) are not the manifest's")
        }
        let aligned = ledger.aligned(with: observed, desired: desired, adoptExisting: saved.options.adoptExisting)
        let derived = targeting.apply(
            to: Planner.plan(desired: scope.plannedDesired, ledger: aligned, observed: observed, adoptExisting: saved.options.adoptExisting),
            deviceNames: desired.deviceNames)
        if derived.groups != plan.groups || derived.topics != plan.topics {
            throw stale(
                "its operations are not the ones its manifest, state and observations give: \(listed(Self.differences(plan, derived))) "
                    + "differ\(Self.differences(plan, derived).count == 1 ? "s" : "")")
        }
        if saved.fingerprints != PlanFingerprint.facts(of: plan, observed: observed) {
            throw stale("its fingerprints are not those of its observations")
        }
        return observed
    }

    /// Addresses whose changes differ between two plans; an address listed twice in one counts as differing.
    static func differences(_ one: Plan, _ other: Plan) -> [String] {
        func changes(_ plan: Plan) -> [String: [AnyHashable]] {
            var byAddress: [String: [AnyHashable]] = [:]
            for group in plan.groups { byAddress[group.address, default: []].append(group) }
            for topic in plan.topics { byAddress[topic.address, default: []].append(topic) }
            return byAddress
        }
        let (mine, theirs) = (changes(one), changes(other))
        let differing = Set(mine.keys).union(theirs.keys).filter { mine[$0] != theirs[$0] }.sorted()
        // Same changes in another order: the order is what differs.
        return differing.isEmpty ? ["the order of the changes"] : differing
    }
}
