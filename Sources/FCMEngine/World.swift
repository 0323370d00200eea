import FCMClient
import FCMCore
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
        self.executor = executor
        self.service = service
        self.live = live
        self.shutdown = shutdown
        self.statistics = statistics
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
