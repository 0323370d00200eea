import FCMCore
import Foundation

/// The state in memory, in the same formats as on disk, for unit and contract tests of everything
/// above the store. Locks have no lease here: a holder is live until it unlocks.
package final class InMemoryStateStore: StateStore, @unchecked Sendable {
    private let mutex = NSLock()
    private var state: [UInt8]?
    private var journal: [UInt8] = []
    private var lockHolder: LockInfo?
    /// Fails the next journal append or state write, to test what callers do about it.
    package var failJournalAfter: Int?
    private var appended = 0

    package init() {}

    package var displayName: String { "memory" }

    package var journalBytes: [UInt8] { mutex.withLock { journal } }
    package var stateBytes: [UInt8]? { mutex.withLock { state } }

    package func read() async throws -> StateSnapshot {
        let (state, journal): ([UInt8]?, [UInt8]) = mutex.withLock { (self.state, self.journal) }
        let stored = try state.map { try StateFileFormat.decode($0, source: "memory") }
        return try StateAssembly.snapshot(stored: stored, journal: journal, statePath: "memory", journalPath: "memory journal")
    }

    package func storedVersion() async throws -> StateVersion? {
        let state: [UInt8]? = mutex.withLock { self.state }
        return try state.map { try StateFileFormat.decode($0, source: "memory") }.map {
            StateVersion(lineage: $0.ledger.lineage, serial: $0.ledger.serial)
        }
    }

    package func write(_ ledger: Ledger, replacing expected: StateVersion?, force: Bool) async throws -> StateVersion {
        try mutex.withLock {
            let current = try state.map { try StateFileFormat.decode($0, source: "memory") }
            let version = current.map { StateVersion(lineage: $0.ledger.lineage, serial: $0.ledger.serial) }
            guard version == expected else { throw StateConflictError("memory: the state changed since it was read") }
            if !force, let version, ledger.lineage != version.lineage || ledger.serial <= version.serial {
                throw StateConflictError("memory: refusing lineage \(ledger.lineage) serial \(ledger.serial) over serial \(version.serial)")
            }
            state = StateFileFormat.encode(ledger, mergedRuns: StateAssembly.runs(in: journal))
            journal = []
            return StateVersion(lineage: ledger.lineage, serial: ledger.serial)
        }
    }

    package func openJournal(base: StateVersion, expectedBytes: Int) async throws -> any StateJournal {
        try mutex.withLock {
            guard journal.isEmpty else { throw StateError("memory journal: holds records that are not in the state yet") }
            journal = JournalFormat.encode(
                JournalFormat.RunHeader(run: newLineage(), lineage: base.lineage, baseSerial: base.serial, started: Date()))
        }
        return MemoryJournal(store: self)
    }

    fileprivate func append(_ entries: [JournalEntry]) throws -> Int {
        try mutex.withLock {
            if let limit = failJournalAfter, appended >= limit { throw StateError("memory journal: no space left (injected)") }
            appended += 1
            let before = journal.count
            JournalFormat.encode(entries, into: &journal)
            return journal.count - before
        }
    }

    package func lock(operation: String, timeout: Duration) async throws -> StateLock {
        try mutex.withLock {
            if let holder = lockHolder { throw StateLockedError(holder: holder, store: "memory", now: Date()) }
            let info = LockInfo(
                id: newLineage(), who: "test@memory", host: "memory", pid: getpid(), processStart: nil, operation: operation,
                created: Date(), expires: .distantFuture, version: "")
            lockHolder = info
            return StateLock(info: info)
        }
    }

    package func unlock(_ lock: StateLock) async throws {
        mutex.withLock { if lockHolder?.id == lock.info.id { lockHolder = nil } }
    }

    package func forceUnlock(id: String) async throws -> LockInfo {
        try mutex.withLock {
            guard let holder = lockHolder, holder.id == id else { throw StateError("memory: no lock with id \(id)") }
            lockHolder = nil
            return holder
        }
    }

    package func currentLock() async throws -> LockInfo? { mutex.withLock { lockHolder } }
}

private final class MemoryJournal: StateJournal, @unchecked Sendable {
    private let store: InMemoryStateStore
    private let mutex = NSLock()
    private var written = 0

    init(store: InMemoryStateStore) { self.store = store }

    func append(_ entries: [JournalEntry]) async throws {
        let count = try store.append(entries)
        mutex.withLock { written += count }
    }

    var bytesWritten: Int { get async { mutex.withLock { written } } }
}
