import FCMCore
import FCMReconcile

/// One run's connection to the world: the state location and project it was opened for, the FCM connection
/// once made, and what the run shares between its steps (the lease fence, the concurrency learned by the
/// refresh, the stop a signal or `--timeout` requests). Everything it has to say goes to `notices`.
package final class Session {
    package let world: World
    package let settings: RunSettings
    package let environment: [String: String]
    package let statePath: String
    /// The project this run's manifests are for: the state must not be another project's, and every state
    /// write records it. Nil when no manifest says (`state` commands without one).
    package let project: ProjectBinding?
    package let notices: Notices
    package let progress: any ProgressReporting
    package let signals: SignalHooks
    /// Lets requests that change FCM through only while the state lock's lease will outlast them.
    package let fence = LeaseFence()
    /// Requests in flight, up to --parallelism: learned by the refresh and kept by the apply that follows.
    package let concurrency: ConcurrencyLimit
    /// This run's stop: a signal or `apply --timeout` requests it.
    package let stop = StopSignal()
    /// When the run began, on the world's clock: `apply --timeout` counts from here.
    package let started: Double
    private(set) var connection: Connection?
    /// Where refresh and apply run their request tasks: the connection's, once connected.
    package var executor: (any TaskExecutor)? { connection?.executor }

    /// Opened by `SessionOpener` only, so every run takes the world, environment, notices and signals the
    /// command boundary gave it.
    init(
        world: World, settings: RunSettings, environment: [String: String], statePath: String, project: ProjectBinding?,
        notices: Notices, progress: any ProgressReporting, signals: SignalHooks
    ) {
        self.world = world
        self.settings = settings
        self.environment = environment
        self.statePath = statePath
        self.project = project
        self.notices = notices
        self.progress = progress
        self.signals = signals
        concurrency = ConcurrencyLimit(maximum: settings.parallelism)
        started = world.clock.now()
    }

    /// Connects through the world (the libcurl client, or fakes in tests).
    package func connect(project: ProjectSettings, needsProjectID: Bool) throws -> Connection {
        var options = ConnectOptions(
            parallelism: settings.parallelism, qps: settings.qps, endpoint: settings.endpoint, verbose: settings.verbose,
            environment: environment, needsProjectID: needsProjectID, fence: fence, stop: stop)
        options.groupExportURL = settings.groupExportURL
        do {
            let connection = try world.connect(project, options)
            self.connection = connection
            return connection
        } catch {
            throw EngineFailure("\(error)")
        }
    }

    /// The state store for this run; its warnings are notices.
    package func openStore() -> any StateStore {
        let notices = self.notices
        return world.store(statePath) { notices.warning($0) }
    }

    /// Seconds on the world's clock since `start`.
    package func seconds(since start: Double) -> Double { world.clock.now() - start }

    /// `--verbose`: what happened on the wire, counted.
    package func reportStatistics() {
        guard settings.verbose else { return }
        let counts = (connection?.statistics() ?? [:]).sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        notices("Requests: \(counts)")
        notices("In flight: up to \(concurrency.current) of --parallelism \(settings.parallelism).")
    }
}
