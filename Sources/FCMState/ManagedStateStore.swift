import FCMCore

/// A store that is the state manager over one medium: everything a command asks goes to `manager`.
package protocol ManagedStateStore: StateStore {
    var manager: StateManager { get }
}

extension ManagedStateStore {
    package var displayName: String { manager.displayName }
    package var journalDisplayName: String { manager.journalDisplayName }
    package func read() async throws -> StateSnapshot { try await manager.read() }
    package func read(selecting: ShardSelector?) async throws -> StateSnapshot { try await manager.read(selecting: selecting) }
    package func lock(operation: String, timeout: Duration) async throws -> StateLock {
        try await manager.lock(operation: operation, timeout: timeout)
    }
    package func unlock(_ lock: StateLock) async throws { try await manager.unlock(lock) }
    package func forceUnlock(id: String) async throws -> LockInfo { try await manager.forceUnlock(id: id) }
    package func currentLock() async throws -> LockInfo? { try await manager.currentLock() }
    package func write(_ ledger: Ledger, replacing expected: StateVersion?, force: Bool) async throws -> StateVersion {
        try await manager.write(ledger, replacing: expected, force: force)
    }
    package func storedVersion() async throws -> StateVersion? { try await manager.storedVersion() }
    package func openJournal(base: StateVersion, expectedBytes: Int) async throws -> any StateJournal {
        try await manager.openJournal(base: base, expectedBytes: expectedBytes)
    }
    /// Renews the lease of `lock` now (tests on a ManualClock, which renew by hand).
    @discardableResult
    package func renew(_ lock: StateLock) async -> Bool { await manager.renew(lock) }
    /// A renewal is the question: it goes through only while the lock is still the one this process wrote.
    package func stillHolds(_ lock: StateLock) async -> Bool {
        guard !lock.isLost else { return false }
        return await manager.renew(lock)
    }
}
