import Foundation
import Synchronization

/// Where the ledger lives, and the lock and journal that keep it whole. One implementation per backend in
/// FCMState (local file, in memory; a bucket later); the engine and the commands see only this.
package protocol StateStore: Sendable {
    /// A path or URL, for messages.
    var displayName: String { get }
    /// Where this store keeps the journal, for messages that send a person there.
    var journalDisplayName: String { get }

    /// The ledger with every journaled completion replayed and every unresolved intent marked pending.
    /// No state yet is an empty ledger with `version == nil`; state that cannot be read is an error.
    func read() async throws -> StateSnapshot

    /// The same, reading of a sharded state only the shards `selecting` picks from its outline (nil: all),
    /// with `Ledger.slice` saying which. A store that cannot read in part reads the whole state.
    func read(selecting: ShardSelector?) async throws -> StateSnapshot

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
    /// about `expectedBytes` bytes of journal (`JournalBudget`). Fails, before anything is sent, if not.
    func openJournal(base: StateVersion, expectedBytes: Int) async throws -> any StateJournal

    /// See the extension: whether `lock` is still held, asked of the medium.
    func stillHolds(_ lock: StateLock) async -> Bool
}

extension StateStore {
    package func read(selecting: ShardSelector?) async throws -> StateSnapshot { try await read() }

    package func write(_ ledger: Ledger, replacing expected: StateVersion?) async throws -> StateVersion {
        try await write(ledger, replacing: expected, force: false)
    }

    /// Whether `lock` is still this process's, asked of the medium (a renewal), not of what the process last
    /// knew: a run paused past its lease learns it was taken over only when it asks, and must not write the
    /// state behind the new holder's back. Stores without a medium to ask answer from what they know.
    package func stillHolds(_ lock: StateLock) async -> Bool { !lock.isLost }
}

/// Completed operations and intents of one run, in order. An append returns once the records would
/// survive the process being killed.
package protocol StateJournal: Sendable {
    func append(_ entries: [JournalEntry]) async throws
    /// Bytes written so far, for figures.
    var bytesWritten: Int { get async }
    /// What became of this journal, asked when its run did not write the state at the end (its lock was
    /// taken over or removed, or another writer got there first): whoever took over may have folded it into
    /// the state and removed it, and a message must not promise records the journal no longer holds.
    func fate() async -> JournalFate
}

extension StateJournal {
    package func fate() async -> JournalFate { .unknown("this journal cannot tell") }
}

/// Where the records of a run that could not write the state are.
package enum JournalFate: Sendable, Equatable {
    /// The journal is still there: the next run folds it in.
    case kept
    /// The journal is gone and the state has moved on from the serial the run started from: a later write
    /// folded it in (a write folds every journal it finds) and the records are in the state.
    case folded(base: Int, now: Int)
    /// The journal is gone but the state did not take it in (removed by hand, or the state was replaced):
    /// what the run recorded there is lost. `why` says what was found.
    case lost(why: String)
    /// It could not be checked.
    case unknown(String)
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

}

/// A held lock. `lost` turns true if the lease could not be renewed or someone took the lock over: the
/// holder must then stop sending requests.
package final class StateLock: Sendable {
    package let info: LockInfo
    private let state: LeaseRecord

    /// `validUntil`: monotonic seconds (`StateLock.now()`) until which the lease is known to be held,
    /// counted from before the write that took or renewed it.
    package init(info: LockInfo, validUntil: Double = .infinity) {
        self.info = info
        self.state = LeaseRecord(validUntil: validUntil)
    }

    package var isLost: Bool { state.read().lost }
    package func markLost() { state.update { $0.lost = true } }

    package var validUntil: Double { state.read().validUntil }

    /// A renewal written after `start` made the lease last `lease` seconds from then.
    package func confirm(renewedAt start: Double, lease: Double) {
        state.update { $0.validUntil = max($0.validUntil, start + lease) }
    }

    /// Whether a request that may take up to `seconds` would end while the lease is still known held. A run
    /// paused past its lease (SIGSTOP, a VM frozen) finds this false when it resumes, before it sends again:
    /// by then another runner may hold the lock and have read FCM.
    package func permits(seconds: Double, now: Double = StateLock.now()) -> Bool {
        let current = state.read()
        return !current.lost && now + seconds <= current.validUntil
    }

    /// Seconds on the monotonic clock, which keeps counting while the process is stopped: `SystemClock`'s
    /// scale, so a lease a store measured on the system clock is judged on the same one.
    package static func now() -> Double { SystemClock().now() }
}

private final class LeaseRecord: Sendable {
    struct Value {
        var lost = false
        var validUntil: Double
    }

    private let value: Mutex<Value>

    init(validUntil: Double) { value = Mutex(Value(validUntil: validUntil)) }

    func read() -> Value { value.withLock { $0 } }
    func update(_ change: (inout Value) -> Void) { value.withLock { change(&$0) } }
}

/// What stands between a run that holds the state lock and FCM: every request that changes something first
/// asks the fence, which lets it through only while the lease will outlast the request's deadline, waits
/// while a renewal is due, and refuses once the lease may have run out. Commands arm it with their lock.
package final class LeaseFence: Sendable {
    private let held = Mutex<StateLock?>(nil)
    /// The longest a fenced request may take (its transport deadline).
    package let requestDeadline: Double
    /// Before a renewal the lease may run below a request's deadline for a moment: wait this long at most.
    package let margin: Double

    package init(requestDeadline: Double = 10, margin: Double = 0.25) {
        self.requestDeadline = requestDeadline
        self.margin = margin
    }

    package func arm(_ lock: StateLock?) { held.withLock { $0 = lock } }
    package func disarm() { held.withLock { $0 = nil } }

    /// The latest moment a request admitted with `deadline` may start and still end within the lease.
    package func latestStart(deadline: Double) -> Double? {
        held.withLock { $0 }.map { $0.validUntil - deadline }
    }

    /// The lease of lock `lockID` is lost or may be: nothing more is sent (`Refused+Wording` in FCMReconcile).
    package struct Refused: Error {
        package var lockID: String
    }

    /// Returns the deadline (seconds) the request must keep when a request may go, nil when no lock is held;
    /// throws `Refused` (nothing sent) when the lease is lost or may be.
    @discardableResult
    package func admit(now: () -> Double = StateLock.now, sleep: (Double) async throws -> Void = { try await Task.sleep(for: .seconds($0)) })
        async throws -> Double?
    {
        guard let lock = held.withLock({ $0 }) else { return nil }
        // A third of the lease at most, so a request sent just after a renewal ends long before the next.
        let lease = lock.info.expires.timeIntervalSince(lock.info.created)
        let deadline = min(requestDeadline, max(lease / 3, 0.05))
        while true {
            let current = now()
            if lock.permits(seconds: deadline, now: current) { return deadline }
            if lock.isLost || current >= lock.validUntil {
                throw Refused(lockID: lock.info.id)
            }
            // Held, but not for long enough: a renewal is due in well under a third of the lease.
            try await sleep(margin)
        }
    }
}

package struct StateLockedError: Error, Sendable {
    package var holder: LockInfo
    package var store: String
    package var now: Date

    package init(holder: LockInfo, store: String, now: Date) {
        self.holder = holder
        self.store = store
        self.now = now
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
