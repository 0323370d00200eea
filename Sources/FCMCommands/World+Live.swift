import FCMCore
import FCMEngine
import FCMState
import FCMViews
import Foundation

/// A failure to connect that a person reads as is.
struct ConnectError: Error, CustomStringConvertible {
    var description: String
}

extension World {
    /// The world commands run in: the live one, or a test's world of fakes (`World.$current.withValue`).
    @TaskLocal package static var current = World.live

    /// libcurl, Application Default Credentials, the local state file, the system clock.
    package static let live = World.live(clock: SystemClock())

    /// The live world on another clock: tests pass a `ManualClock` so that backoff, pacing and token lifetimes
    /// pass without waiting while requests still go over libcurl to an emulator.
    package static func live(clock: any RunClock) -> World {
        World(
            connect: { project, options in try LiveConnection.make(project: project, options: options, clock: clock) },
            store: { path, warn in
                if let location = GCSLocation(path) {
                    return LiveStorage.store(location, environment: Console.current.environment, clock: clock, warn: warn)
                }
                return LocalStateStore(
                    path: path, lease: lockLease(Console.current.environment), identity: .current(), version: FCMCtl.version, warn: warn)
            },
            clock: clock,
            now: { today(Console.current.environment, clock: clock) })
    }

    /// The state lock's lease: 30 s, or FCMCTL_LOCK_LEASE seconds (at least 1) for tests that pause a
    /// holder past its lease without waiting half a minute.
    static func lockLease(_ environment: [String: String]) -> TimeInterval {
        guard let text = environment["FCMCTL_LOCK_LEASE"], let seconds = Double(text), seconds >= 1 else { return 30 }
        return seconds
    }

    /// The system clock, unless FCMCTL_NOW (`2027-09-30` or an ISO 8601 time) sets the day: to rehearse
    /// what a pipeline will do on a turndown date, and for tests on both sides of it.
    static func today(_ environment: [String: String], clock: any RunClock) -> Date {
        guard let text = environment["FCMCTL_NOW"], !text.isEmpty else { return clock.wallTime() }
        return parseDay(text) ?? clock.wallTime()  // `execute` refuses an unreadable FCMCTL_NOW before any command runs
    }

    static func parseDay(_ text: String) -> Date? {
        if let moment = ISO8601DateFormatter().date(from: text) { return moment }
        let day = ISO8601DateFormatter()
        day.formatOptions = [.withFullDate]
        return day.date(from: text)
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
