import FCMCore
import FCMManifest
import FCMReconcile
import Foundation

/// `apply FILE`: the reviewed plan, exactly, or nothing. A plan file passes through CI storage, so nothing in
/// it is taken on its word: its digest must match its content (and `--expect-digest`, the approved one); the
/// manifest must be the one it was made from; under the lock the state must be the one it was made from; the
/// operations are computed again from the manifest, the state and the observations the plan carries, and must
/// be the saved ones exactly; and what the operations touch is re-read from FCM and must be as observed.
/// Anything else is exit 5, naming what differs, with nothing sent and no state written.
package struct SavedPlanApplication {
    package let path: String
    package let saved: SavedPlan
    package let plan: Plan
    package let targeting: PlanTargeting

    /// Reads the file and checks it is whole and the approved one.
    package init(path: String, expectDigest: String?) throws {
        let saved: SavedPlan
        do {
            saved = try SavedPlanFile.read(path)
        } catch let outdated as SavedPlanFile.Outdated {
            throw EngineFailure(outdated.description, code: ExitCodes.stalePlan)
        } catch {
            throw EngineFailure("\(error)")
        }
        if let mismatch = SavedPlanDigest.mismatch(saved) { throw Self.stale(mismatch) }
        if let expected = expectDigest, SavedPlanDigest.normalized(expected) != saved.digest {
            throw Self.stale("its digest is \(saved.digest ?? "missing"), not the approved \(SavedPlanDigest.normalized(expected))")
        }
        do {
            plan = try saved.plan()
            targeting = try saved.options.targeting()
        } catch {
            throw Self.stale("\(error)")
        }
        self.path = path
        self.saved = saved
    }

    static func stale(_ why: String) -> EngineFailure {
        EngineFailure("the saved plan is refused: \(why). Nothing was sent; run plan again", code: ExitCodes.stalePlan)
    }

    /// False for a plan made with `--refresh=changed`: its topics' unchanged counts were not read.
    package var unchangedRead: Bool { saved.options.refresh == RefreshMode.all.rawValue }

    /// The manifest the plan was made from must be here: the operations are computed again from it. Returns
    /// what it declares, and where it says the state is (`state:`), if it does. `showErrors` shows the
    /// manifest's diagnostics when it no longer loads. The device names of a changed-only plan are left to
    /// `apply` to fill in from the manifest returned, for the shards it reads.
    package func checkManifest(
        paths: [String], outsidePaths: PathConfinement.Policy, environment: [String: String], showErrors: ([String: [UInt8]], [Diagnostic]) -> Void
    ) throws -> (DesiredState, String?, Manifest) {
        guard paths.allSatisfy({ FileManager.default.fileExists(atPath: $0) }) else {
            throw Self.stale("the manifest \(paths.joined(separator: ", ")) is not here, so the plan's operations cannot be checked against it")
        }
        let result = ManifestStage.load(paths, outsidePaths: outsidePaths, environment: environment)
        guard ManifestDigest.of(result.sources, deviceFiles: result.deviceFileDigests) == saved.manifestDigest else {
            throw EngineFailure(
                "the saved plan is stale: the manifest \(paths.joined(separator: ", ")) changed since the plan was made. Nothing was sent; run plan again",
                code: ExitCodes.stalePlan)
        }
        guard let loaded = result.loaded else {
            showErrors(result.sources, result.diagnostics)
            throw EngineFailure("the manifest has errors; nothing was sent to FCM")
        }
        let desired = loaded.desiredState(namingDevices: saved.options.refresh != RefreshMode.changed.rawValue)
        // The id as the run addresses it, as `plan -out` recorded it: a manifest without `project.id` is for
        // the project GOOGLE_CLOUD_PROJECT (or the key) names, and that must not change between plan and apply.
        var settings = desired.project
        settings.id = ProjectBinding.addressed(settings, environment: environment).id
        let project = SavedPlan.Project(settings)
        if project != saved.project {
            throw Self.stale(
                "it is for project \(saved.project.id) (sender \(saved.project.senderId), topic API \(saved.project.topicApi)), "
                    + "but the manifest says \(project.id) (sender \(project.senderId), topic API \(project.topicApi))")
        }
        return (desired, loaded.manifest.state?.resolvedLocation, loaded.manifest)
    }

    /// Under the lock: the state must be the plan's, the operations must follow from it, and what they touch
    /// must be in FCM as observed; then the transaction runs.
    package func apply(
        _ transaction: ApplyTransaction, desired: DesiredState, manifest: Manifest
    ) async throws -> ApplyOutcome {
        let session = transaction.session
        let store = transaction.store
        // The shards the plan was made from: the same state and manifests choose the same ones.
        let (snapshot, desired, _) = try await session.readState(
            store, for: desired, mode: RefreshMode(rawValue: saved.options.refresh) ?? .all, manifest: manifest)
        // The plan's project is the manifest's (checked before): a state of another project makes the plan
        // one that cannot be applied here, exit 5 like any plan that does not fit what it meets.
        try session.checkProject(snapshot, store: store, code: ExitCodes.stalePlan, prefix: "the saved plan is refused: ")
        try checkState(snapshot: snapshot, store: store)
        let recorded = try SavedPlanRederivation(application: self).rederive(desired: desired, ledger: snapshot.ledger)
        session.notices("Re-reading what the plan touches: \(plan.groups.count) group(s) and the registrations of \(plan.topics.count) topic(s)…")
        var unread = UnreadCreates.forSavedPlan(plan, ledger: snapshot.ledger, topicAPI: desired.project.topicAPI)
        // One of them is re-read all the same: its answer stands for these credentials, the project and the sender.
        if let first = unread.min() { unread.remove(first) }
        if !unread.isEmpty {
            session.notices(
                "Not re-reading \(plural(unread.count, "registration")) the plan only subscribes to additive topics: FCM's answer to each "
                    + "create says what a read would (already subscribed by someone else: held, not recorded).")
        }
        var observed: ObservedState
        do {
            observed = try await Refresher(service: transaction.service, limit: session.concurrency, executor: session.executor).refresh(
                touchedBy: plan, skipping: unread)
        } catch {
            throw EngineFailure("re-reading FCM failed: \(error). Nothing was sent")
        }
        observed.fillUnreadMembers(from: snapshot.ledger)
        let expected = PlanFingerprint.facts(of: plan, observed: recorded, skipping: unread)
        let now = PlanFingerprint.facts(of: plan, observed: observed, skipping: unread)
        let moved = expected.keys.filter { expected[$0] != now[$0] }.sorted()
        if !moved.isEmpty {
            throw EngineFailure(
                "the saved plan is stale: \(Self.listed(moved)) changed in FCM since it was made. Nothing was sent; run plan again",
                code: ExitCodes.stalePlan)
        }
        var ledger = snapshot.ledger
        if snapshot.version == nil { ledger = Ledger(lineage: saved.lineage, serial: 0) }
        // The reviewed plan changes a group only if it was fcmctl's (or adopted) when the plan was made.
        let forApply = saved.desiredForApply
        // The file does not keep which device rotated; the manifest and the state say it again.
        var plan = self.plan
        plan.successors = Dictionary(snapshot.ledger.rotations(in: desired).map { ($0.old, $0.new) }) { first, _ in first }
        // What was re-read is what the plan touches; the refresh mode is the one the plan was made with.
        let refresh = RefreshSummary(
            mode: saved.options.refresh, registrationsRead: observed.registrations.count, registrationsKnown: observed.registrations.count,
            groupsRead: observed.groups.count, groupsKnown: observed.groups.count)
        let computed = ComputedPlan(
            desired: forApply, ledger: ledger.aligned(with: observed, desired: forApply, adoptExisting: true), snapshot: snapshot,
            observed: observed, plan: plan, refresh: refresh, unread: unread)
        // A targeted plan leaves other objects as they were: the manifest as a whole was not applied.
        return try await transaction.execute(computed, declared: targeting.isPartial ? nil : desired)
    }

    static func listed(_ addresses: [String]) -> String {
        addresses.prefix(10).joined(separator: ", ") + (addresses.count > 10 ? " and \(addresses.count - 10) more" : "")
    }

    func checkState(snapshot: StateSnapshot, store: any StateStore) throws {
        if let version = snapshot.version, version.lineage != saved.lineage {
            throw EngineFailure(
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
            throw EngineFailure("the saved plan is stale: \(why). Nothing was sent; run plan again", code: ExitCodes.stalePlan)
        }
    }
}
