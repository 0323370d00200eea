import Foundation

/// Where the ledger lives, and the lock and journal that keep it whole. One implementation per backend in
/// FCMState (local file, in memory; a bucket later); the engine and the commands see only this.
package protocol StateStore: Sendable {
    /// A path or URL, for messages.
    var displayName: String { get }

    /// The ledger with every journaled completion replayed and every unresolved intent marked pending.
    /// No state yet is an empty ledger with `version == nil`; state that cannot be read is an error.
    func read() async throws -> StateSnapshot

    /// Takes the state lock for `operation`, waiting up to `timeout` while another live holder has it.
    /// Throws `StateLockedError` when it stays held. A live holder's lease is renewed until `unlock`.
    func lock(operation: String, timeout: Duration) async throws -> StateLock
    func unlock(_ lock: StateLock) async throws
    /// Removes a lock by id whoever holds it (`fcmctl state unlock`); returns what it removed.
    func forceUnlock(id: String) async throws -> LockInfo
    /// The current holder, if any.
    func currentLock() async throws -> LockInfo?

    /// Writes `ledger` (its own lineage and serial) if the stored state is still `expected` (nil: none
    /// yet), and folds the journal into it. A lost race throws `StateConflictError` and writes nothing.
    /// With `force`, a different lineage or a lower serial is accepted (`state push --force`); the
    /// compare-and-swap on `expected` still holds.
    func write(_ ledger: Ledger, replacing expected: StateVersion?, force: Bool) async throws -> StateVersion

    /// What is stored now, read without replaying or judging it (for `state push --force`).
    func storedVersion() async throws -> StateVersion?

    /// Starts the journal of a run on top of `base`, after proving it can be written and has room for
    /// about `expectedOperations` operations. Fails, before anything is sent, if not.
    func openJournal(base: StateVersion, expectedOperations: Int) async throws -> any StateJournal
}

extension StateStore {
    package func write(_ ledger: Ledger, replacing expected: StateVersion?) async throws -> StateVersion {
        try await write(ledger, replacing: expected, force: false)
    }
}

/// Completed operations and intents of one run, in order. An append returns once the records would
/// survive the process being killed.
package protocol StateJournal: Sendable {
    func append(_ entries: [JournalEntry]) async throws
    /// Bytes written so far, for figures.
    var bytesWritten: Int { get async }
}

/// Identifies one written state: lineage and serial, plus whatever the backend compares (a generation).
package struct StateVersion: Hashable, Sendable, Codable {
    package var lineage: String
    package var serial: Int
    package var generation: String?

    package init(lineage: String, serial: Int, generation: String? = nil) {
        self.lineage = lineage
        self.serial = serial
        self.generation = generation
    }
}

package struct StateSnapshot: Sendable {
    package var ledger: Ledger
    /// nil when nothing has been written yet.
    package var version: StateVersion?
    /// Journal records replayed over the stored state: non-zero after an interrupted run.
    package var replayedEntries: Int
    /// Unresolved intents found in the journal (the ledger marks them pending).
    package var pendingIntents: Int
    /// Something a person should know (a torn last journal line, an old format to be upgraded).
    package var warnings: [String]
    /// The stored form differs from `ledger` (a journal to fold in, an old format): the next write is due
    /// even if no record changes.
    package var needsWrite: Bool

    package init(
        ledger: Ledger, version: StateVersion?, replayedEntries: Int = 0, pendingIntents: Int = 0, warnings: [String] = [],
        needsWrite: Bool = false
    ) {
        self.ledger = ledger
        self.version = version
        self.replayedEntries = replayedEntries
        self.pendingIntents = pendingIntents
        self.warnings = warnings
        self.needsWrite = needsWrite
    }
}

/// Who holds the state lock, as stored in the lock and printed to whoever is refused.
package struct LockInfo: Hashable, Sendable, Codable {
    package var id: String
    /// user@host
    package var who: String
    package var host: String
    package var pid: Int32
    /// The holder's process start time (clock ticks since boot), so a reused pid is not mistaken for it.
    package var processStart: UInt64?
    package var operation: String
    package var created: Date
    package var expires: Date
    package var version: String

    package init(
        id: String, who: String, host: String, pid: Int32, processStart: UInt64?, operation: String, created: Date, expires: Date,
        version: String
    ) {
        self.id = id
        self.who = who
        self.host = host
        self.pid = pid
        self.processStart = processStart
        self.operation = operation
        self.created = created
        self.expires = expires
        self.version = version
    }

    package func describe(now: Date) -> String {
        let age = max(0, Int(now.timeIntervalSince(created).rounded()))
        return "\(who) (pid \(pid)), operation \(operation), for \(Self.duration(age)) (lock id \(id))"
    }

    package static func duration(_ seconds: Int) -> String {
        if seconds < 120 { return "\(seconds) s" }
        if seconds < 7200 { return "\(seconds / 60) min" }
        return "\(seconds / 3600) h"
    }
}

/// A held lock. `lost` turns true if the lease could not be renewed or someone took the lock over: the
/// holder must then stop sending requests.
package final class StateLock: Sendable {
    package let info: LockInfo
    private let state: LockedFlag

    package init(info: LockInfo) {
        self.info = info
        self.state = LockedFlag()
    }

    package var isLost: Bool { state.value }
    package func markLost() { state.set() }
}

private final class LockedFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var flag = false
    var value: Bool { lock.withLock { flag } }
    func set() { lock.withLock { flag = true } }
}

package struct StateLockedError: Error, Sendable, CustomStringConvertible {
    package var holder: LockInfo
    package var store: String
    package var now: Date

    package init(holder: LockInfo, store: String, now: Date) {
        self.holder = holder
        self.store = store
        self.now = now
    }

    package var description: String {
        "the state \(store) is locked by \(holder.describe(now: now)). Wait for it to finish or pass --lock-timeout; "
            + "if that run is gone for good, remove the lock with: fcmctl state unlock \(holder.id)"
    }
}

/// The stored state is not the one this run read: another writer got there first, or an older copy was
/// put in place. Nothing was written.
package struct StateConflictError: Error, Sendable, CustomStringConvertible {
    package var description: String

    package init(_ description: String) { self.description = description }
}

/// State that exists but cannot be used: unreadable, corrupt, of a newer format, or unwritable.
package struct StateError: Error, Sendable, CustomStringConvertible {
    package var description: String

    package init(_ description: String) { self.description = description }
}
