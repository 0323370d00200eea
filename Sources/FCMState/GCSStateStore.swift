import FCMCore
import Foundation

/// The state in a bucket, for CI runners that come and go. Objects under `prefix`:
///
///     state.json                       the ledger (version 2), every write conditional on the generation read
///     state.lock                       the lock: owner token, holder, operation, created, lease expiry
///     journal/SERIAL-RUN-SEQ.jsonl     journal segments: one object per append of a run in progress
///
/// Object storage cannot append, so each journal append is one new object (created with
/// ifGenerationMatch=0). The next state write folds them in, names their runs in `merged_runs`, and
/// deletes them. A run killed at any moment leaves segments whose intents the next refresh resolves.
package final class GCSStateStore: StateStore, @unchecked Sendable {
    let storage: any ObjectStorage
    let prefix: String
    let lease: TimeInterval
    let identity: ProcessIdentity
    let version: String
    let now: @Sendable () -> Date
    let warn: @Sendable (String) -> Void
    /// Lock polling while waiting, and lease renewal: how often to try.
    let pollInterval: Duration
    private let mutex = NSLock()
    private var renewals: [String: Task<Void, Never>] = [:]
    private var lockGeneration: [String: Int64] = [:]
    private var lastRenewed: [String: Date] = [:]

    package init(
        storage: any ObjectStorage, prefix: String, lease: TimeInterval = 30, identity: ProcessIdentity = .current(), version: String = "",
        now: @escaping @Sendable () -> Date = { Date() }, warn: @escaping @Sendable (String) -> Void = { _ in },
        pollInterval: Duration = .milliseconds(500)
    ) {
        self.storage = storage
        var prefix = prefix
        while prefix.hasSuffix("/") { prefix.removeLast() }
        self.prefix = prefix
        self.lease = lease
        self.identity = identity
        self.version = version
        self.now = now
        self.warn = warn
        self.pollInterval = pollInterval
    }

    package var displayName: String { "\(storage.displayName)/\(prefix)" }
    package var journalDisplayName: String { "the journal segments \(storage.displayName)/\(journalPrefix)*" }
    var stateObject: String { prefix.isEmpty ? "state.json" : "\(prefix)/state.json" }
    var lockObject: String { prefix.isEmpty ? "state.lock" : "\(prefix)/state.lock" }
    /// The lineage and serial this store last wrote, beside the state: an older generation put back in its
    /// place, or a deleted state, is then noticed instead of being read as the truth.
    var serialObject: String { prefix.isEmpty ? "state.serial" : "\(prefix)/state.serial" }
    var journalPrefix: String { prefix.isEmpty ? "journal/" : "\(prefix)/journal/" }

    /// Every call to the bucket goes through here, so an error names the object and says what to check.
    func attempt<T>(_ what: String, _ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let error as ObjectStorageError {
            switch error {
            case .preconditionFailed, .notFound: throw error
            case .failed(let message):
                throw StateError(
                    "\(displayName): \(what) failed: \(message). Check the bucket exists and the credentials may "
                        + "storage.objects.get/create/delete/list on it")
            }
        }
    }

    // MARK: Reading

    package func read() async throws -> StateSnapshot {
        let stored = try await attempt("reading the state") { try await storage.get(stateObject) }
        let decoded = try stored.map { try StateFileFormat.decode($0.bytes, source: "\(storage.displayName)/\(stateObject)") }
        let journal = try await readJournal()
        let marker = try await attempt("reading the state's serial record") { try await storage.get(serialObject) }
        let recorded = StateAssembly.recordedSerial(marker?.bytes)
        if let decoded {
            if let recorded, recorded.lineage == decoded.ledger.lineage, decoded.ledger.serial < recorded.serial {
                throw StateConflictError(
                    "\(storage.displayName)/\(stateObject) has serial \(decoded.ledger.serial), but this bucket last recorded serial "
                        + "\(recorded.serial) of lineage \(recorded.lineage): an older generation was put back, and using it would forget "
                        + "what was recorded since. Restore the newer generation, or roll back deliberately with `fcmctl state push --force`")
            }
        } else {
            try StateAssembly.refuseMissingState(
                "\(storage.displayName)/\(stateObject)", marker: recorded != nil, journal: !journal.names.isEmpty)
        }
        var snapshot = try StateAssembly.snapshot(
            stored: decoded, journal: journal.bytes, statePath: "\(storage.displayName)/\(stateObject)",
            journalPath: "\(storage.displayName)/\(journalPrefix)")
        if let stored, let decoded {
            snapshot.version = StateVersion(lineage: decoded.ledger.lineage, serial: decoded.ledger.serial, generation: String(stored.generation))
        }
        return snapshot
    }

    /// The segments in order, joined: each is whole lines, so a segment is never torn.
    func readJournal() async throws -> (bytes: [UInt8]?, names: [String]) {
        let names = try await attempt("listing the journal") { try await storage.list(prefix: journalPrefix) }
        guard !names.isEmpty else { return (nil, []) }
        var bytes: [UInt8] = []
        var present: [String] = []
        for name in names {
            guard let segment = try await attempt("reading the journal segment \(name)", { try await storage.get(name) }) else { continue }
            bytes += segment.bytes
            present.append(name)
        }
        return (bytes, present)
    }

    // MARK: Writing

    package func storedVersion() async throws -> StateVersion? {
        guard let stored = try await attempt("reading the state", { try await storage.get(stateObject) }) else { return nil }
        let decoded = try StateFileFormat.decode(stored.bytes, source: "\(storage.displayName)/\(stateObject)")
        return StateVersion(lineage: decoded.ledger.lineage, serial: decoded.ledger.serial, generation: String(stored.generation))
    }

    package func write(_ ledger: Ledger, replacing expected: StateVersion?, force: Bool) async throws -> StateVersion {
        if !force, let expected {
            if ledger.lineage != expected.lineage {
                throw StateConflictError(
                    "\(displayName): refusing to replace lineage \(expected.lineage) with \(ledger.lineage); pass --force to do so")
            }
            if ledger.serial <= expected.serial {
                throw StateConflictError(
                    "\(displayName): refusing serial \(ledger.serial), which is not newer than the stored \(expected.serial); pass --force to do so")
            }
        }
        let journal = try await readJournal()
        let merged = journal.bytes.map(StateAssembly.runs) ?? []
        // The generation this run read is the condition: a writer that got there first makes this a 412.
        let condition: Int64 = expected.map { Int64($0.generation ?? "") ?? -1 } ?? 0
        let generation: Int64
        do {
            generation = try await attempt("writing the state") {
                try await storage.put(stateObject, StateFileFormat.encode(ledger, mergedRuns: merged), ifGenerationMatch: condition)
            }
        } catch ObjectStorageError.preconditionFailed {
            let found = try? await storedVersion()
            throw StateConflictError(
                "\(displayName) changed while this run worked: it expected \(Self.describe(expected)) and found \(Self.describe(found)). "
                    + "Another writer got there first; nothing was written by this run, and its journal segments are kept. "
                    + "Run again to plan on the newer state")
        }
        do {
            _ = try await storage.put(serialObject, StateAssembly.serialRecord(ledger), ifGenerationMatch: nil)
        } catch {
            // The state is written; a stale record only means a rollback of this write would go unnoticed.
            warn("\(storage.displayName)/\(serialObject): could not record the serial (\(error)); the next write records it")
        }
        // The state now holds what the segments did, and names their runs in case a delete is lost.
        for name in journal.names {
            do {
                try await storage.delete(name, ifGenerationMatch: nil)
            } catch ObjectStorageError.notFound {
                continue
            } catch {
                warn("\(storage.displayName)/\(name): could not remove a merged journal segment (\(error)); it will be skipped when read")
            }
        }
        return StateVersion(lineage: ledger.lineage, serial: ledger.serial, generation: String(generation))
    }

    static func describe(_ version: StateVersion?) -> String {
        guard let version else { return "no state" }
        return "serial \(version.serial) of lineage \(version.lineage)"
    }

    // MARK: Journal

    package func openJournal(base: StateVersion, expectedBytes: Int) async throws -> any StateJournal {
        let leftover = try await attempt("listing the journal") { try await storage.list(prefix: journalPrefix) }
        if !leftover.isEmpty {
            throw StateError(
                "\(displayName): the journal holds records that are not in the state yet; nothing was sent. Run again: the next run folds them in first"
            )
        }
        let header = JournalFormat.RunHeader(run: newLineage(), lineage: base.lineage, baseSerial: base.serial, started: now())
        let serial = String(base.serial)
        let stem = journalPrefix + String(repeating: "0", count: max(0, 12 - serial.count)) + serial + "-" + header.run
        let journal = GCSJournal(store: self, stem: stem)
        // Proves the bucket takes writes before the first request is sent.
        try await journal.write(JournalFormat.encode(header))
        return journal
    }

    // MARK: Locking

    func readLock() async throws -> (LockInfo, Int64)? {
        guard let object = try await attempt("reading the lock", { try await storage.get(lockObject) }) else { return nil }
        let lock = try LockDocument.decode(
            object.bytes, source: "\(storage.displayName)/\(lockObject)", remedy: "if no fcmctl run is active, remove it with `fcmctl state unlock`")
        return (lock, object.generation)
    }

    package func lock(operation: String, timeout: Duration) async throws -> StateLock {
        let deadline = ContinuousClock.now + timeout
        let created = now()
        // The owner token: a create retried after a lost reply finds its own token and knows the lock is ours.
        let mine = LockInfo(
            id: newLineage(), who: "\(identity.user)@\(identity.host)", host: identity.host, pid: identity.pid,
            processStart: identity.processStart, operation: operation, created: created, expires: created.addingTimeInterval(lease),
            version: version)
        while true {
            if let lock = try await acquireOnce(mine) { return lock }
            guard let (holder, _) = try await readLock() else { continue }
            if holder.id == mine.id { continue }
            if ContinuousClock.now >= deadline { throw StateLockedError(holder: holder, store: displayName, now: now()) }
            // Another runner holds it: nothing to wait on but the object itself.
            try await Task.sleep(for: min(pollInterval, deadline - ContinuousClock.now))
        }
    }

    /// One try: create the lock, or take over an expired one, or find ours. nil: someone else holds it.
    private func acquireOnce(_ mine: LockInfo) async throws -> StateLock? {
        var info = mine
        // The lease is counted from before the write: the holder never believes it longer than it is.
        let start = StateLock.now()
        info.expires = now().addingTimeInterval(lease)
        do {
            let generation = try await attempt("creating the lock") {
                try await storage.put(lockObject, LockDocument.encode(info), ifGenerationMatch: 0)
            }
            return started(StateLock(info: info, validUntil: start + lease), generation: generation)
        } catch ObjectStorageError.preconditionFailed {
            guard let (holder, generation) = try await readLock() else { return nil }
            if holder.id == info.id {
                // Ours, written by an attempt whose reply was lost: it lasts as long as the stored expiry says.
                let remaining = holder.expires.timeIntervalSince(now())
                return started(StateLock(info: holder, validUntil: StateLock.now() + remaining), generation: generation)
            }
            guard let reason = LockDocument.staleReason(holder, identity: identity, now: now()) else { return nil }
            do {
                let taken = try await attempt("taking over the lock") {
                    try await storage.put(lockObject, LockDocument.encode(info), ifGenerationMatch: generation)
                }
                warn("took over the state lock \(holder.id) of \(holder.who) (pid \(holder.pid), \(holder.operation)): \(reason)")
                return started(StateLock(info: info, validUntil: start + lease), generation: taken)
            } catch ObjectStorageError.preconditionFailed {
                return nil  // another newcomer took it first
            }
        }
    }

    private func started(_ lock: StateLock, generation: Int64) -> StateLock {
        let interval = max(lease / 3, 0.05)
        let task = Task.detached { [weak self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: .milliseconds(Int(interval * 1000)))
                guard !Task.isCancelled, let self else { return }
                await self.renew(lock)
            }
        }
        mutex.withLock {
            renewals[lock.info.id] = task
            lockGeneration[lock.info.id] = generation
            lastRenewed[lock.info.id] = now()
        }
        return lock
    }

    private func renew(_ lock: StateLock) async {
        guard let generation = mutex.withLock({ lockGeneration[lock.info.id] }) else { return }
        var renewed = lock.info
        let start = StateLock.now()
        renewed.expires = now().addingTimeInterval(lease)
        do {
            let next = try await storage.put(lockObject, LockDocument.encode(renewed), ifGenerationMatch: generation)
            lock.confirm(renewedAt: start, lease: lease)
            mutex.withLock {
                lockGeneration[lock.info.id] = next
                lastRenewed[lock.info.id] = now()
            }
        } catch ObjectStorageError.preconditionFailed, ObjectStorageError.notFound {
            lock.markLost()
            warn("the state lock \(lock.info.id) was taken over or removed; stopping before the next request")
            mutex.withLock { renewals.removeValue(forKey: lock.info.id) }?.cancel()
        } catch {
            // A network error: the next tick tries again. Once the lease has run out, another runner may take
            // the lock, so this one must stop.
            let last = mutex.withLock { lastRenewed[lock.info.id] } ?? lock.info.created
            if now().timeIntervalSince(last) >= lease {
                lock.markLost()
                warn("the state lock \(lock.info.id) could not be renewed for \(Int(lease)) s (\(error)); stopping before the next request")
            }
        }
    }

    package func unlock(_ lock: StateLock) async throws {
        mutex.withLock { renewals.removeValue(forKey: lock.info.id) }?.cancel()
        let generation = mutex.withLock { lockGeneration.removeValue(forKey: lock.info.id) }
        do {
            try await attempt("removing the lock") { try await storage.delete(lockObject, ifGenerationMatch: generation) }
        } catch ObjectStorageError.notFound, ObjectStorageError.preconditionFailed {
            // Taken over or removed by `state unlock`: it is not ours to delete any more.
        }
    }

    package func forceUnlock(id: String) async throws -> LockInfo {
        guard let (current, generation) = try await readLock() else { throw StateError("\(displayName) is not locked") }
        guard current.id == id else {
            throw StateError("\(displayName) is locked by \(current.describe(now: now())), not by lock id \(id); nothing was removed")
        }
        do {
            try await attempt("removing the lock") { try await storage.delete(lockObject, ifGenerationMatch: generation) }
        } catch ObjectStorageError.preconditionFailed {
            throw StateError("\(displayName): the lock changed while it was being removed (its holder renewed it?); nothing was removed")
        }
        return current
    }

    package func currentLock() async throws -> LockInfo? { try await readLock()?.0 }
}

/// Journal segments: every append is one new object, numbered within the run, written before `append`
/// returns, so the intents it holds are durable before their requests are sent.
final class GCSJournal: StateJournal, @unchecked Sendable {
    private let store: GCSStateStore
    private let stem: String
    private let mutex = NSLock()
    private var sequence = 0
    private var written = 0
    private var broken: String?

    init(store: GCSStateStore, stem: String) {
        self.store = store
        self.stem = stem
    }

    func append(_ entries: [JournalEntry]) async throws {
        var bytes: [UInt8] = []
        JournalFormat.encode(entries, into: &bytes)
        try await write(bytes)
    }

    func write(_ bytes: [UInt8]) async throws {
        let name: String = try mutex.withLock {
            if let broken { throw StateError(broken) }
            sequence += 1
            let number = String(sequence)
            return stem + "-" + String(repeating: "0", count: max(0, 8 - number.count)) + number + ".jsonl"
        }
        var failure: (any Error)?
        do {
            _ = try await store.attempt("writing the journal segment \(name)") { try await store.storage.put(name, bytes, ifGenerationMatch: 0) }
        } catch ObjectStorageError.preconditionFailed {
            // A create retried after its reply was lost finds the segment there, with these very lines.
            if (try? await store.storage.get(name))?.bytes != bytes { failure = ObjectStorageError.preconditionFailed(name) }
        } catch {
            failure = error
        }
        if let failure {
            let message = "\(store.storage.displayName)/\(name): cannot write the state journal: \(failure)"
            mutex.withLock { broken = message }
            throw StateError(message)
        }
        mutex.withLock { written += bytes.count }
    }

    var bytesWritten: Int { get async { mutex.withLock { written } } }
}
