import FCMCore
import Foundation
import Synchronization

/// A lease this process holds: the generation of the lock object it last wrote (every renewal and the release
/// are conditional on it, so a takeover or a forced unlock is noticed), and when a renewal last went through.
struct HeldLease: Sendable {
    var generation: Int64
    /// `clock.now()` before the last write that took or renewed the lease.
    var confirmed: Double
    var renewal: Task<Void, Never>?
}

/// The lease lock, once for every medium: created only if absent, taken over only if stale (its holder on this
/// host is gone, or its lease expired), renewed and released only if still the generation this process wrote.
extension StateManager {
    func readLock() async throws -> (LockInfo, Int64)? {
        guard let object = try await attempt("reading the lock", { try await storage.get(layout.lock) }) else { return nil }
        let lock = try LockDocument.decode(object.bytes, source: layout.locate(layout.lock), remedy: layout.medium.lockRemedy)
        return (lock, object.generation)
    }

    package func lock(operation: String, timeout: Duration) async throws -> StateLock {
        let deadline = clock.now() + timeout.seconds
        let created = clock.wallTime()
        // The owner token: a create retried after a lost reply finds its own token and knows the lock is ours.
        let mine = LockInfo(
            id: newLineage(), who: "\(identity.user)@\(identity.host)", host: identity.host, pid: identity.pid,
            processStart: identity.processStart, operation: operation, created: created, expires: created.addingTimeInterval(lease),
            version: version)
        while true {
            let attempt: Attempt
            do {
                attempt = try await DirectoryLockDeadline.$value.withValue(deadline) { try await acquireOnce(mine) }
            } catch let busy as DirectoryLockBusy {
                // The lock document is read without the flock: if a live run holds the state lock (and the flock
                // only for a moment of its own), that is the holder to name, with the exit of a held lock.
                if let (holder, _) = try? await readLock(), holder.id != mine.id,
                    LockDocument.staleReason(holder, identity: identity, now: clock.wallTime()) == nil
                {
                    throw StateLockedError(holder: holder, store: displayName, now: clock.wallTime())
                }
                throw StateError("\(busy)")
            }
            switch attempt {
            case .acquired(let lock):
                return lock
            case .released:
                continue
            case .held(let holder):
                let now = clock.now()
                if now >= deadline { throw StateLockedError(holder: holder, store: displayName, now: clock.wallTime()) }
                // Another holder has it: nothing to wait on but the lock object itself.
                try await clock.sleep(seconds: min(pollInterval, deadline - now))
            }
        }
    }

    enum Attempt {
        case acquired(StateLock)
        case held(LockInfo)
        /// Gone between the create and the read, or taken by another newcomer: try again at once.
        case released
    }

    private func acquireOnce(_ mine: LockInfo) async throws -> Attempt {
        var info = mine
        // The lease is counted from before the write: the holder never believes it longer than it is.
        let start = clock.now()
        info.expires = clock.wallTime().addingTimeInterval(lease)
        do {
            let generation = try await attempt("creating the lock") {
                try await storage.put(layout.lock, LockDocument.encode(info), ifGenerationMatch: 0)
            }
            return .acquired(hold(StateLock(info: info, validUntil: start + lease), generation: generation, confirmed: start))
        } catch ObjectStorageError.preconditionFailed {
            guard let (holder, generation) = try await readLock() else { return .released }
            if holder.id == info.id {
                // Ours, written by an attempt whose reply was lost: it lasts as long as the stored expiry says.
                let now = clock.now()
                let remaining = holder.expires.timeIntervalSince(clock.wallTime())
                return .acquired(hold(StateLock(info: holder, validUntil: now + remaining), generation: generation, confirmed: now))
            }
            guard let reason = LockDocument.staleReason(holder, identity: identity, now: clock.wallTime()) else { return .held(holder) }
            do {
                let taken = try await attempt("taking over the lock") {
                    try await storage.put(layout.lock, LockDocument.encode(info), ifGenerationMatch: generation)
                }
                warn("took over the state lock \(holder.id) of \(holder.who) (pid \(holder.pid), \(holder.operation)): \(reason)")
                return .acquired(hold(StateLock(info: info, validUntil: start + lease), generation: taken, confirmed: start))
            } catch ObjectStorageError.preconditionFailed {
                return .released
            }
        }
    }

    private func hold(_ lock: StateLock, generation: Int64, confirmed: Double) -> StateLock {
        var renewal: Task<Void, Never>?
        if renewsInBackground {
            let interval = max(lease / 3, 0.05)
            let clock = clock
            renewal = Task.detached(executorPreference: LeaseExecutor.shared) { [weak self] in
                while !Task.isCancelled {
                    try? await clock.sleep(seconds: interval)
                    guard !Task.isCancelled, let self, await self.renew(lock) else { return }
                }
            }
        }
        leases.withLock { $0[lock.info.id] = HeldLease(generation: generation, confirmed: confirmed, renewal: renewal) }
        return lock
    }

    /// Extends the lease of `lock` by a write conditional on the generation last written. Returns whether it
    /// is still held: false once it was taken over or removed, or could not be renewed for a whole lease
    /// (another runner may have taken it since), and `lock` is then marked lost.
    @discardableResult
    package func renew(_ lock: StateLock) async -> Bool {
        guard let held = leases.withLock({ $0[lock.info.id] }) else { return false }
        var renewed = lock.info
        let start = clock.now()
        renewed.expires = clock.wallTime().addingTimeInterval(lease)
        do {
            let next = try await storage.put(layout.lock, LockDocument.encode(renewed), ifGenerationMatch: held.generation)
            lock.confirm(renewedAt: start, lease: lease)
            leases.withLock {
                $0[lock.info.id]?.generation = next
                $0[lock.info.id]?.confirmed = start
            }
            return true
        } catch ObjectStorageError.preconditionFailed, ObjectStorageError.notFound {
            lock.markLost()
            warn("the state lock \(lock.info.id) was taken over or removed; stopping before the next request")
        } catch {
            // The next tick tries again, unless the lease ran out meanwhile.
            guard clock.now() - held.confirmed >= lease else { return true }
            lock.markLost()
            warn("the state lock \(lock.info.id) could not be renewed for \(Int(lease)) s (\(error)); stopping before the next request")
        }
        leases.withLock { $0[lock.info.id]?.renewal = nil }
        return false
    }

    package func unlock(_ lock: StateLock) async throws {
        let held = leases.withLock { $0.removeValue(forKey: lock.info.id) }
        held?.renewal?.cancel()
        // A lease known lost belongs to whoever took it over: the conditional delete below would refuse too,
        // but fake-gcs-server (where the gcs store's tests run) does not honour a delete's condition.
        if lock.isLost { return }
        let generation: Int64
        if let held {
            generation = held.generation
        } else {
            // A lock this manager did not take (another store object of the same state): release it if it is that one.
            guard let (current, stored) = try await readLock(), current.id == lock.info.id else { return }
            generation = stored
        }
        do {
            try await attempt("removing the lock") { try await storage.delete(layout.lock, ifGenerationMatch: generation) }
        } catch ObjectStorageError.notFound, ObjectStorageError.preconditionFailed {
            // Taken over or removed by `state unlock`: it is not ours to delete any more.
        }
    }

    package func forceUnlock(id: String) async throws -> LockInfo {
        // A live holder may renew between the read and the delete; each round reads what is there now.
        for _ in 0..<5 {
            guard let (current, generation) = try await readLock() else { throw StateError("\(displayName) is not locked") }
            guard current.id == id else {
                throw StateError("\(displayName) is locked by \(current.describe(now: clock.wallTime())), not by lock id \(id); nothing was removed")
            }
            do {
                try await attempt("removing the lock") { try await storage.delete(layout.lock, ifGenerationMatch: generation) }
                return current
            } catch ObjectStorageError.preconditionFailed {
                continue
            } catch ObjectStorageError.notFound {
                throw StateError("\(displayName) is not locked")
            }
        }
        throw StateError("\(displayName): the lock kept changing while it was being removed (its holder renewing it?); nothing was removed")
    }

    package func currentLock() async throws -> LockInfo? { try await readLock()?.0 }

    /// Refuses a journal append once a lease this store holds has gone a whole lease unrenewed (the process
    /// was paused, or renewals kept failing): another run may hold the lock by now and have folded and removed
    /// this run's journal, and a segment written then would be a stray in its store. Such a run sends no more
    /// requests either (LeaseFence), so there is nothing new to journal.
    func requireLeaseForJournal() throws {
        let now = clock.now()
        guard let stale = leases.withLock({ $0.first { now - $0.value.confirmed >= lease }?.key }) else { return }
        throw StateError(
            "the state lock \(stale) went \(Int(lease)) s without a renewal (another run may hold it now), so nothing more is written "
                + "to the journal")
    }
}
