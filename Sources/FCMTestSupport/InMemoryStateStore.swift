import FCMCore
import FCMState
import Foundation
import Synchronization

/// The state in memory, in the same formats and under the same rules as every store (the state manager over
/// a `MemoryObjectStorage`), for unit and contract tests of everything above the store. Its lease outlasts
/// any test, so a holder is live until it unlocks, and nothing renews it.
package final class InMemoryStateStore: ManagedStateStore {
    package let storage: MemoryObjectStorage
    package let manager: StateManager
    private let injected = Mutex<(failAfter: Int?, appended: Int)>((nil, 0))

    /// The defaults are what tests above the store want; the store conformance suite gives a lease and
    /// identities to hold the in-memory store to the same lock rules as the others.
    package init(
        lease: TimeInterval = 100 * 365 * 86400,
        identity: ProcessIdentity = ProcessIdentity(user: "test", host: "memory", pid: getpid(), processStart: nil),
        clock: any RunClock = SystemClock(), storage: MemoryObjectStorage = MemoryObjectStorage(displayName: "memory"),
        warn: @escaping @Sendable (String) -> Void = { _ in }, policy: ShardPolicy = .standard
    ) {
        self.storage = storage
        let layout = StateLayout(
            state: "state.json", lock: "state.lock", serial: "state.serial", journal: "journal/", medium: .memory,
            locate: { $0.hasPrefix("journal/") ? "memory journal" : "memory" })
        manager = StateManager(
            storage: storage, layout: layout, displayName: "memory", journalDisplayName: "memory journal", lease: lease, identity: identity,
            version: "", clock: clock,
            warn: warn, pollInterval: 0.01, renewsInBackground: false, policy: policy)
    }

    /// Fails the journal append after this many, to test what callers do about it.
    package var failJournalAfter: Int? {
        get { injected.withLock { $0.failAfter } }
        set { injected.withLock { $0.failAfter = newValue } }
    }

    /// How many appends the journal has taken.
    package var journalAppends: Int { injected.withLock { $0.appended } }

    /// The journal's segments joined, as a reader replays them.
    package var journalBytes: [UInt8] { storage.joined(prefix: manager.layout.journal) }

    package func openJournal(base: StateVersion, expectedBytes: Int) async throws -> any StateJournal {
        FailingJournal(inner: try await manager.openJournal(base: base, expectedBytes: expectedBytes), store: self)
    }

    /// Counts an append; throws if the injected failure is due.
    fileprivate func admitAppend() throws {
        try injected.withLock {
            if let limit = $0.failAfter, $0.appended >= limit { throw StateError("memory journal: no space left (injected)") }
            $0.appended += 1
        }
    }
}

private final class FailingJournal: StateJournal {
    let inner: any StateJournal
    let store: InMemoryStateStore

    init(inner: any StateJournal, store: InMemoryStateStore) {
        self.inner = inner
        self.store = store
    }

    func append(_ entries: [JournalEntry]) async throws {
        try store.admitAppend()
        try await inner.append(entries)
    }

    var bytesWritten: Int { get async { await inner.bytesWritten } }

    func fate() async -> JournalFate { await inner.fate() }
}
