import FCMClient
import FCMCore
import FCMManifest
import FCMReconcile
import FCMState
import Foundation

/// The stages every command shares: load and validate, connect, read state, refresh, plan.
struct LoadedManifest {
    var manifest: Manifest
    var resolution: Resolution
    /// The files read, by path: what a saved plan's manifest digest covers.
    var sources: [String: [UInt8]]

    /// Built on demand: at fleet scale it hashes every subscription, which `validate` does not need.
    func desiredState() -> DesiredState { manifest.desiredState(resolution) }
}

/// Holds the state path as it becomes known: `--state` wins, then the manifest's `state.path`, then the default
/// (which must be one place: see `stateLocation()`).
final class Pipeline {
    let manifestPaths: [String]
    let options: RunOptions
    let format: OutputFormat
    private var statePath: String?
    /// The default state of each `-f`, without repeats: one place, or an ambiguity to refuse.
    private let defaultStatePaths: [String]
    /// The project this run's manifests are for, once known: the state must not be another project's, and
    /// every state write records it.
    var project: ProjectBinding?
    private var desired: DesiredState?
    private var connection: Connection?
    /// Where refresh and apply run their request tasks: the connection's, once connected.
    var executor: (any TaskExecutor)? { connection?.executor }
    /// Lets requests that change FCM through only while the state lock's lease will outlast them.
    let fence = LeaseFence()
    /// Requests in flight, up to --parallelism: learned by the refresh and kept by the apply that follows.
    lazy var concurrency = ConcurrencyLimit(maximum: options.parallelism)
    /// This run's stop: a signal (see `Interruption`) or `apply --timeout` requests it.
    let stop = StopSignal()
    /// When the command began: `apply --timeout` counts from here.
    let started = ContinuousClock.now

    var console: Console { Console.current }

    init(manifest: ManifestOptions, state: StateOptions, options: RunOptions, format: OutputFormat = .text) {
        manifestPaths = manifest.paths
        statePath = state.state
        defaultStatePaths = StateOptions.defaultStatePaths(manifests: manifest.paths)
        self.options = options
        self.format = format
    }

    /// The state this run uses. Several `-f` whose directories differ have several default states, and the
    /// first is not the environment's (issue 23: `-f fcm/base -f fcm/prod` used fcm/base's state, shared with
    /// dev): a person says which, with `--state` or the manifest's `state:`.
    func stateLocation() throws -> String {
        if let statePath { return statePath }
        guard defaultStatePaths.count > 1 else { return defaultStatePaths.first ?? ".fcmctl/state.json" }
        throw fail(
            "the manifests \(manifestPaths.map { "-f \($0)" }.joined(separator: ", ")) would keep their state in different places "
                + "(\(defaultStatePaths.joined(separator: ", "))), and fcmctl will not guess which is this environment's. Pass --state PATH "
                + "with this environment's state, or declare `state:` (a path, or a gcs bucket) in its manifest. Nothing was read or sent")
    }

    func overrideStatePath(_ path: String) { statePath = path }

    /// Prints every diagnostic in the chosen format; fails with exit 1 if any is an error, before anything is sent.
    static func load(_ paths: [String], format: OutputFormat = .text) throws -> LoadedManifest {
        let result = ManifestLoader().load(paths: paths)
        var diagnostics = result.diagnostics
        if let manifest = result.manifest, let missing = ProjectIDRule.check(manifest, environment: Console.current.environment) {
            diagnostics.append(missing)
        }
        DiagnosticPrinter(sources: result.sources, format: format).print(diagnostics)
        guard let manifest = result.manifest, let resolution = result.resolution, !diagnostics.hasErrors else {
            let errors = diagnostics.filter { $0.severity == .error }.count
            throw fail("the manifest has \(errors) error\(errors == 1 ? "" : "s"); nothing was sent to FCM")
        }
        return LoadedManifest(manifest: manifest, resolution: resolution, sources: result.sources)
    }

    /// sha256 of the manifest files read by `loadDesired`.
    private(set) var manifestDigest = ""

    func loadDesired() throws -> DesiredState {
        // Only `validate` prints its findings as a JSON document; the other commands' documents carry them.
        let loaded = try Self.load(manifestPaths, format: format == .github ? .github : .text)
        manifestDigest = ManifestDigest.of(loaded.sources)
        let desired = loaded.desiredState()
        if desired.isEmpty && !options.allowEmpty {
            throw fail(
                "the manifest declares no groups and no topics; fcmctl would remove everything it manages. "
                    + "Pass --allow-empty if that is what you want")
        }
        if let location = loaded.manifest.state?.resolvedLocation { statePath = statePath ?? location }
        if let line = Self.deviceFileCounts(loaded.manifest) { console.err(line) }
        project = Self.project(of: desired.project)
        return desired
    }

    /// One note per device whose registration the plan replaces: the rotation, not an anonymous add and remove.
    static func rotationNotes(_ rotations: [(name: String, old: Registration, new: Registration)], plan: Plan) -> [Diagnostic] {
        let touched = Set(plan.topics.flatMap { $0.added + $0.removed } + plan.groups.flatMap { $0.added + $0.removed })
        let redactor = Redactor(showTokens: false)
        return rotations.filter { touched.contains($0.old) || touched.contains($0.new) }.map { rotation in
            Diagnostic(
                .note,
                "device \(rotation.name) rotated its registration (\(redactor(rotation.old)) → \(redactor(rotation.new))): "
                    + "its subscriptions and group memberships move to the new one")
        }
    }

    /// "Devices: 100000 (99990 from fleet.jsonl, 10 from lab.csv)": what the device files contributed.
    static func deviceFileCounts(_ manifest: Manifest) -> String? {
        var counts: [String: Int] = [:]
        for device in manifest.devices.values where DeviceFileFormat.isDeviceFile(device.location.file) {
            counts[(device.location.file as NSString).lastPathComponent, default: 0] += 1
        }
        guard !counts.isEmpty else { return nil }
        let parts = counts.sorted { $0.key < $1.key }.map { "\($0.value) from \($0.key)" }
        return "Devices: \(manifest.devices.count) (\(parts.joined(separator: ", ")))."
    }

    /// Connects through the world (the libcurl client, or fakes in tests).
    func connect(project: ProjectSettings) throws -> Connection {
        var options = ConnectOptions(
            parallelism: self.options.parallelism, qps: self.options.qps, endpoint: self.options.endpoint, verbose: self.options.verbose,
            environment: console.environment, needsProjectID: !(desired?.topics.isEmpty ?? true), fence: fence, stop: stop)
        options.groupExportURL = self.options.groupExportUrl
        do {
            let connection = try World.current.connect(project, options)
            self.connection = connection
            return connection
        } catch {
            throw fail("\(error)")
        }
    }

    /// Loads the manifests and connects: the common start of every command that talks to FCM.
    func start() throws -> Connection {
        let desired = try loadDesired()
        self.desired = desired
        // An ambiguous state location is refused before anything else happens.
        _ = try stateLocation()
        return try connect(project: desired.project)
    }

    static func seconds(since start: ContinuousClock.Instant) -> Double {
        let elapsed = ContinuousClock.now - start
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    }

    /// `--verbose`: what happened on the wire, counted.
    func reportStatistics() {
        guard options.verbose else { return }
        let counts = (connection?.statistics() ?? [:]).sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        console.err("Requests: \(counts)")
        console.err("In flight: up to \(concurrency.current) of --parallelism \(options.parallelism).")
    }

    /// The state store for this run; its warnings go to stderr.
    func openStore() throws -> any StateStore {
        let console = self.console
        return World.current.store(try stateLocation()) { console.err("warning: \($0)") }
    }

    /// Reads the state, printing what the read had to say (a replayed journal, a torn line).
    func readState(_ store: any StateStore) async throws -> StateSnapshot {
        let snapshot: StateSnapshot
        do {
            snapshot = try await store.read()
        } catch {
            throw fail("\(error)")
        }
        for warning in snapshot.warnings { console.err("warning: \(warning)") }
        if snapshot.replayedEntries > 0 {
            console.err(
                "Recovered \(snapshot.replayedEntries) journal record\(snapshot.replayedEntries == 1 ? "" : "s") of an interrupted run"
                    + (snapshot.pendingIntents > 0
                        ? "; \(snapshot.pendingIntents) operation\(snapshot.pendingIntents == 1 ? "" : "s") may have happened and will be checked against FCM."
                        : "."))
        }
        return snapshot
    }

    /// One note when the operator's member export probe turned out absent; otherwise, in `--verbose`, where
    /// group members came from.
    func noteRecordedMembers(_ observed: ObservedState) {
        let recorded = observed.groupsWithRecordedMembers
        guard !recorded.isEmpty else { return }
        if let reason = connection?.live?.groupExportFallback {
            console.err("note: the group member export probe is off for this run (\(reason)); group members come from the state")
        } else if options.verbose {
            console.err("Group members of \(plural(recorded.count, "group")) come from the state: FCM documents no way to list them.")
        }
    }

    /// Names each registration FCM would not tell about (redacted) and what was left out because of it.
    /// Returns the exit code to end with: 1, or 0 under `--skip-unreadable`.
    func reportUnreadable(_ observed: ObservedState) -> Int32 {
        guard !observed.unreadable.isEmpty else { return ExitCodes.success }
        let redactor = Redactor(showTokens: options.showTokens)
        let severity = options.skipUnreadable ? "warning" : "error"
        for (registration, reason) in observed.unreadable.sorted(by: { $0.key < $1.key }).prefix(20) {
            console.err("\(severity): could not read the subscriptions of \(redactor(registration)): \(reason)")
        }
        if observed.unreadable.count > 20 { console.err("\(severity): … and \(observed.unreadable.count - 20) more registrations") }
        console.err(
            "\(severity): \(observed.unreadable.count) registration\(observed.unreadable.count == 1 ? "" : "s") could not be read; "
                + "nothing that depends on them was planned, and their records are kept. Run again later"
                + (options.skipUnreadable ? "" : ", or pass --skip-unreadable to accept the rest with exit 0"))
        return options.skipUnreadable ? ExitCodes.success : ExitCodes.error
    }

    struct Computed {
        /// Everything the manifests declare.
        var desired: DesiredState
        /// The ledger as read, with FCM's answers folded in: what the plan was made from.
        var ledger: Ledger
        var snapshot: StateSnapshot
        var observed: ObservedState
        var plan: Plan
        var refresh: RefreshSummary
        /// Deprecated FCM features this run touches, with the days left.
        var deprecations: [DeprecationNotice] = []
    }

    /// The progress line and events of this run; silent unless the command set one up.
    var progress = RunProgress.silent
    /// Deprecated FCM features the last computed plan touches.
    private(set) var deprecations: [DeprecationNotice] = []
    /// `--adopt-existing`: declared groups that exist in FCM but not in the state become fcmctl's.
    var adoptExisting = false
    /// `--target` / `--exclude`: the plan is cut down to these.
    var targeting = PlanTargeting()

    func compute(
        service: any FCMService, store: any StateStore, mode: RefreshMode = .all, includeLocalGroups: Bool = false
    ) async throws -> Computed {
        var desired = try self.desired ?? loadDesired()
        let snapshot = try await readState(store)
        try checkProject(snapshot, store: store)
        let usesGroups = !desired.groups.isEmpty || !snapshot.ledger.knownGroupNames.isEmpty
        let usesIID = desired.project.topicAPI == .iid
        if let reason = PlatformDeprecations.refusal(usesGroups: usesGroups, usesIID: usesIID, now: World.current.now()) {
            throw fail(reason)
        }
        let scope = RefreshScope(desired: desired, ledger: snapshot.ledger, mode: mode, includeLocalGroups: includeLocalGroups)
        let progress = self.progress
        let refresher = Refresher(service: service, limit: concurrency, executor: executor, progress: { progress.advance($0) })
        console.err(
            "Refreshing \(plural(scope.groups.count, "group")) and the subscriptions of \(plural(scope.registrations.count, "registration"))"
                + (mode == .changed ? " (--refresh=changed)" : "") + "…")
        var observed: ObservedState
        let started = ContinuousClock.now
        progress.beginPhase("Refreshing", total: scope.groups.count + scope.registrations.count)
        do {
            var read = try await refresher.refresh(groups: scope.groups, registrations: scope.registrations)
            if mode == .all { read.checkedGroups = nil }
            observed = read
        } catch {
            progress.endPhase()
            throw fail("refreshing the live state failed: \(error). Nothing was changed")
        }
        progress.endPhase()
        if options.verbose {
            let seconds = Self.seconds(since: started)
            let count = observed.registrations.count
            console.err(
                String(
                    format: "Refreshed %d registrations and %d groups in %.2f s (%.0f registrations/s).",
                    count, observed.groups.count, seconds, Double(count) / max(seconds, 0.001)))
        }
        let ledger = snapshot.ledger.aligned(with: observed, desired: desired, adoptExisting: adoptExisting)
        observed.fillUnreadMembers(from: ledger)
        noteRecordedMembers(observed)
        // A registration the manifests no longer name keeps the name it had, so a rotated token reads as
        // that device's, on both sides of the change.
        for (registration, name) in snapshot.ledger.deviceNames where desired.deviceNames[registration] == nil {
            desired.deviceNames[registration] = name
        }
        var plan = targeting.apply(
            to: Planner.plan(desired: scope.plannedDesired, ledger: ledger, observed: observed, adoptExisting: adoptExisting),
            deviceNames: desired.deviceNames)
        plan.notes += Self.rotationNotes(snapshot.ledger.rotations(in: scope.plannedDesired), plan: plan)
        let deprecations = PlatformDeprecations.notices(
            usesGroups: usesGroups, createsGroups: plan.groups.contains { $0.action == .create }, usesIID: usesIID, now: World.current.now())
        for notice in deprecations { console.err("warning: \(notice.message)") }
        self.deprecations = deprecations
        return Computed(
            desired: desired, ledger: ledger, snapshot: snapshot, observed: observed, plan: plan, refresh: scope.summary, deprecations: deprecations)
    }
}
