import FCMClient
import FCMCore
import FCMState
import Foundation

/// Everything commands take from outside the process: FCM, the state store, the clock. The composition
/// root: `World.live` is the one place that builds the real libcurl client and the local file store; tests
/// run the same commands in a world of in-memory fakes (`World.$current.withValue`).
package struct World: Sendable {
    /// Connects to FCM for `project`.
    package var connect: @Sendable (_ project: ProjectSettings, _ options: ConnectOptions) throws -> Connection
    /// The state store at `path`; `warn` prints a warning for a person.
    package var store: @Sendable (_ path: String, _ warn: @escaping @Sendable (String) -> Void) -> any StateStore
    /// The run's one clock: backoff, pacing, leases, progress. Tests pass a `ManualClock`.
    package var clock: any RunClock
    /// Today as the deprecation notices see it: the clock's wall time, unless FCMCTL_NOW rehearses another day.
    package var now: @Sendable () -> Date

    package init(
        connect: @escaping @Sendable (ProjectSettings, ConnectOptions) throws -> Connection,
        store: @escaping @Sendable (String, @escaping @Sendable (String) -> Void) -> any StateStore,
        clock: any RunClock = SystemClock(),
        now: (@Sendable () -> Date)? = nil
    ) {
        self.connect = connect
        self.store = store
        self.clock = clock
        self.now = now ?? { clock.wallTime() }
    }

    @TaskLocal package static var current = World.live
}

/// What a command asks of the connection.
package struct ConnectOptions: Sendable {
    package var parallelism: Int
    package var qps: Double
    package var endpoint: String?
    /// `--group-export-url`: the operator's member export probe; nil leaves group members to the state.
    package var groupExportURL: String?
    package var verbose: Bool
    package var environment: [String: String]
    /// The project id may stay empty (no topics to manage); otherwise a missing id is an error.
    package var needsProjectID: Bool
    /// Armed with the state lock while the command holds it; requests that change FCM pass it first.
    package var fence: LeaseFence?
    /// Requested by a signal or `--timeout`: subscription changes not yet sent are not sent.
    package var stop: StopSignal?

    package init(
        parallelism: Int, qps: Double, endpoint: String?, verbose: Bool, environment: [String: String], needsProjectID: Bool,
        fence: LeaseFence? = nil, stop: StopSignal? = nil
    ) {
        self.fence = fence
        self.stop = stop
        self.parallelism = parallelism
        self.qps = qps
        self.endpoint = endpoint
        self.verbose = verbose
        self.environment = environment
        self.needsProjectID = needsProjectID
    }
}

/// A connected FCM service and how to close it.
package struct Connection: Sendable {
    package var service: any FCMService
    /// The libcurl client, for what only it offers (messages); nil in a world of fakes.
    package var live: FCMHTTPService?
    package var shutdown: @Sendable () -> Void
    /// Requests made, by kind, for `--verbose`.
    package var statistics: @Sendable () -> [String: Int]
    /// Where refresh and apply run the tasks that wait on `service` (libcurl's worker thread: an answer is
    /// taken in where it arrived); nil: anywhere.
    package var executor: (any TaskExecutor)?

    package init(
        service: any FCMService, live: FCMHTTPService? = nil, shutdown: @escaping @Sendable () -> Void = {},
        statistics: @escaping @Sendable () -> [String: Int] = { [:] }, executor: (any TaskExecutor)? = nil
    ) {
        self.service = service
        self.live = live
        self.shutdown = shutdown
        self.statistics = statistics
        self.executor = executor
    }
}

/// A failure to connect that a person reads as is.
struct ConnectError: Error, CustomStringConvertible {
    var description: String
}

extension World {
    /// libcurl, Application Default Credentials, the local state file, the system clock.
    package static let live = World(
        connect: { project, options in try LiveConnection.make(project: project, options: options) },
        store: { path, warn in
            if let location = GCSLocation(path) {
                return LiveStorage.store(location, environment: Console.current.environment, warn: warn)
            }
            return LocalStateStore(
                path: path, lease: lockLease(Console.current.environment), identity: .current(), version: FCMCtl.version, warn: warn)
        },
        now: { clock(Console.current.environment) })

    /// The state lock's lease: 30 s, or FCMCTL_LOCK_LEASE seconds (at least 1) for tests that pause a
    /// holder past its lease without waiting half a minute.
    static func lockLease(_ environment: [String: String]) -> TimeInterval {
        guard let text = environment["FCMCTL_LOCK_LEASE"], let seconds = Double(text), seconds >= 1 else { return 30 }
        return seconds
    }

    /// The system clock, unless FCMCTL_NOW (`2027-09-30` or an ISO 8601 time) sets the day: to rehearse
    /// what a pipeline will do on a turndown date, and for tests on both sides of it.
    static func clock(_ environment: [String: String]) -> Date {
        guard let text = environment["FCMCTL_NOW"], !text.isEmpty else { return Date() }
        return parseDay(text) ?? Date()  // `execute` refuses an unreadable FCMCTL_NOW before any command runs
    }

    static func parseDay(_ text: String) -> Date? {
        if let moment = ISO8601DateFormatter().date(from: text) { return moment }
        let day = ISO8601DateFormatter()
        day.formatOptions = [.withFullDate]
        return day.date(from: text)
    }
}

/// `gs://BUCKET/PREFIX`: where the gcs state backend keeps the state.
package struct GCSLocation: Sendable, Equatable {
    package var bucket: String
    package var prefix: String

    package init?(_ path: String) {
        guard path.hasPrefix("gs://") else { return nil }
        let rest = path.dropFirst(5)
        let parts = rest.split(separator: "/", maxSplits: 1)
        guard let bucket = parts.first, !bucket.isEmpty else { return nil }
        self.bucket = String(bucket)
        self.prefix = parts.count > 1 ? String(parts[1]) : ""
    }

    package var url: String { prefix.isEmpty ? "gs://\(bucket)" : "gs://\(bucket)/\(prefix)" }
}

enum LiveStorage {
    /// The JSON API of GCS (or of the emulator STORAGE_EMULATOR_HOST names, without credentials), on its
    /// own libcurl transport with the FCM client's retry policy.
    static func store(_ location: GCSLocation, environment: [String: String], warn: @escaping @Sendable (String) -> Void) -> any StateStore {
        // Credentials are resolved before the transport exists, so a run without them starts no worker
        // thread; the transport that is made lives exactly as long as the storage that holds it.
        // FCMCTL_STORAGE_ENDPOINT names another JSON API endpoint (a Private Service Connect one, or a test
        // double) and keeps the credentials; STORAGE_EMULATOR_HOST, as in Google's client libraries, drops them.
        let custom = environment["FCMCTL_STORAGE_ENDPOINT"].flatMap { $0.isEmpty ? nil : $0 }
        let emulator = custom == nil ? GCSObjectStorage.emulatorBase(environment) : nil
        var source: CredentialSource?
        if emulator == nil {
            do {
                source = try CredentialResolver.resolve(environment: environment)
            } catch {
                return UnavailableStateStore(displayName: location.url, reason: "no credentials for the state bucket: \(error)")
            }
        }
        let lifetime = TransportLifetime(
            CurlTransport(options: CurlTransport.Options(maximumConnectionsPerHost: 8, loop: CurlTransport.Loop(environment: environment))))
        var credentials: (any AccessTokenProvider)?
        if let source {
            do {
                credentials = try TokenProviderFactory.make(source, environment: environment, transport: lifetime.transport)
            } catch {
                return UnavailableStateStore(displayName: location.url, reason: "no credentials for the state bucket: \(error)")
            }
        }
        let storage = GCSObjectStorage(
            bucket: location.bucket, base: custom ?? emulator ?? "https://storage.googleapis.com",
            sender: RequestSender(transport: lifetime.transport, credentials: credentials), lifetime: lifetime)
        return GCSStateStore(
            storage: storage, prefix: location.prefix, lease: World.lockLease(environment), identity: .current(), version: FCMCtl.version,
            warn: warn)
    }
}

enum LiveConnection {
    /// Credentials in Application Default Credentials order, the FCM base URL, and one rate limiter for
    /// the project shared by every request.
    static func make(project: ProjectSettings, options: ConnectOptions) throws -> Connection {
        let environment = options.environment
        let source: CredentialSource
        do {
            source = try CredentialResolver.resolve(environment: environment)
        } catch {
            throw ConnectError(description: "\(error)")
        }
        let transport = CurlTransport(
            options: CurlTransport.Options(maximumConnectionsPerHost: options.parallelism, loop: CurlTransport.Loop(environment: environment)))
        let credentials: any AccessTokenProvider
        do {
            credentials = try TokenProviderFactory.make(source, environment: environment, transport: transport)
        } catch {
            transport.shutdown()
            throw ConnectError(description: "\(error)")
        }
        var endpoints = FCMEndpoints.production
        if case .emulator(let host) = source { endpoints = .emulator(hostAndPort: host) }
        if let base = options.endpoint ?? environment["FCM_ENDPOINT"], !base.isEmpty {
            let trimmed = base.hasSuffix("/") ? String(base.dropLast()) : base
            endpoints = FCMEndpoints(fcmBase: trimmed, iidBase: trimmed, usesEmulator: false)
        }
        if let export = options.groupExportURL ?? environment["FCMCTL_GROUP_EXPORT_URL"], !export.isEmpty {
            guard export.hasPrefix("http://") || export.hasPrefix("https://") else {
                transport.shutdown()
                throw ConnectError(description: "FCMCTL_GROUP_EXPORT_URL must be an http:// or https:// URL, not '\(export)'")
            }
            endpoints.groupExportURL = export
        }
        var project = project
        if project.id.isEmpty {
            project.id = environment["GOOGLE_CLOUD_PROJECT"] ?? environment["GCLOUD_PROJECT"] ?? keyFileProject(source) ?? ""
        }
        if project.id.isEmpty && options.needsProjectID {
            transport.shutdown()
            throw ConnectError(
                description: "no project id: set project.id in the manifest or GOOGLE_CLOUD_PROJECT, or use a service-account key that names one")
        }
        if options.verbose {
            Console.current.err(
                "Credentials: \(source.summary). FCM API: \(endpoints.fcmBase). Project: \(project.id). HTTP: libcurl, \(transport.loop) loop.")
        }
        let statistics = SendStatistics()
        // Paced requests and retries sleep on the transport's own loop, and wake there.
        let clock = TransportPacingClock(transport: transport)
        let limiter = RateLimiter(perSecond: options.qps, clock: clock, executor: transport)
        let sender = RequestSender(
            transport: transport, credentials: credentials, limiter: limiter, clock: clock, statistics: statistics, fence: options.fence,
            stop: options.stop)
        // Requests waiting for a slot or a retry leave at once, see the stop and give up: a stopping run
        // waits only for what is on the wire.
        options.stop?.onRequest {
            limiter.releaseAll()
            transport.wakeAllSleepers()
        }
        let service = FCMHTTPService(sender: sender, endpoints: endpoints, project: project)
        return Connection(
            service: service, live: service, shutdown: { transport.shutdown() },
            statistics: {
                var counts = statistics.snapshot
                if limiter.configuredRate > 0 {
                    counts["pace_lowest_per_s"] = Int(limiter.lowestRate.rounded())
                    counts["pace_last_per_s"] = Int(limiter.rate.rounded())
                }
                return counts
            }, executor: transport)
    }

    static func keyFileProject(_ source: CredentialSource) -> String? {
        guard case .serviceAccount(let path) = source else { return nil }
        return (try? ServiceAccountKey(path: path))?.projectID
    }
}

/// A store that could not be set up (no credentials for the bucket): every use says why.
struct UnavailableStateStore: StateStore {
    let displayName: String
    let reason: String

    private func refuse() -> StateError { StateError("\(displayName): \(reason)") }

    func read() async throws -> StateSnapshot { throw refuse() }
    func lock(operation: String, timeout: Duration) async throws -> StateLock { throw refuse() }
    func unlock(_ lock: StateLock) async throws { throw refuse() }
    func forceUnlock(id: String) async throws -> LockInfo { throw refuse() }
    func currentLock() async throws -> LockInfo? { throw refuse() }
    func write(_ ledger: Ledger, replacing expected: StateVersion?, force: Bool) async throws -> StateVersion { throw refuse() }
    func storedVersion() async throws -> StateVersion? { throw refuse() }
    func openJournal(base: StateVersion, expectedBytes: Int) async throws -> any StateJournal { throw refuse() }
}
