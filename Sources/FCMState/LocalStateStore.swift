import FCMCore
import Foundation

/// The state as files in one directory (created 0700):
///
///     state.json           the ledger (StateFileFormat, mode 0600), replaced atomically
///     state.json.journal   intents and completions of the run in progress or of one that was killed
///     state.json.lock      who holds the lock (JSON), with a lease the holder renews
///     state.json.serial    lineage and serial of the last state this store wrote, to catch restored copies
///
/// Changes to the lock file happen under an flock(2) of the directory, which the kernel releases if the
/// process dies, so taking over a dead holder's lock is never a race between two newcomers.
package final class LocalStateStore: StateStore, @unchecked Sendable {
    package let path: String
    let lease: TimeInterval
    let identity: ProcessIdentity
    let version: String
    let now: @Sendable () -> Date
    let warn: @Sendable (String) -> Void
    private let mutex = NSLock()
    private var renewals: [String: RenewalThread] = [:]

    package init(
        path: String, lease: TimeInterval = 30, identity: ProcessIdentity = .current(), version: String = "",
        now: @escaping @Sendable () -> Date = { Date() }, warn: @escaping @Sendable (String) -> Void = { _ in }
    ) {
        self.path = path
        self.lease = lease
        self.identity = identity
        self.version = version
        self.now = now
        self.warn = warn
    }

    package var displayName: String { path }
    package var journalPath: String { path + ".journal" }
    package var journalDisplayName: String { journalPath }
    package var lockPath: String { path + ".lock" }
    package var serialPath: String { path + ".serial" }
    var directory: String {
        let parent = PathText.directory(of: path)
        return parent.isEmpty ? "." : parent
    }

    // MARK: Reading

    package func read() async throws -> StateSnapshot {
        try FileIO.requireRegularFileOrAbsent(path, what: "state")
        let stateBytes = try FileIO.readIfPresent(path, what: "state")
        let journal = try FileIO.readIfPresent(journalPath, what: "state journal")
        let stored = try stateBytes.map { try StateFileFormat.decode($0, source: path) }
        if let stored {
            try checkNotRolledBack(stored.ledger)
        } else {
            let marker = try FileIO.readIfPresent(serialPath, what: "state serial record") != nil
            try StateAssembly.refuseMissingState(path, marker: marker, journal: journal != nil)
        }
        return try StateAssembly.snapshot(stored: stored, journal: journal, statePath: path, journalPath: journalPath)
    }

    /// A state older than the last one this store wrote is a restored copy: running on it would forget
    /// every record made since, so it is refused until a person says so (`state push --force`).
    private func checkNotRolledBack(_ ledger: Ledger) throws {
        guard let bytes = try FileIO.readIfPresent(serialPath, what: "state serial record"),
            let record = try? JSONParser.parse(bytes), let lineage = record["lineage"]?.string, let serial = record["serial"]?.int
        else { return }
        if lineage == ledger.lineage && ledger.serial < serial {
            throw StateConflictError(
                "\(path) has serial \(ledger.serial), but this store last wrote serial \(serial) of lineage \(lineage): "
                    + "it looks like an older copy was restored, and using it would forget what was recorded since. "
                    + "Put the newer state back, or if you mean to roll back, run `fcmctl state push --force \(path)`")
        }
    }

    // MARK: Writing

    package func storedVersion() async throws -> StateVersion? {
        try FileIO.readIfPresent(path, what: "state").map { try StateFileFormat.version(of: $0, source: path) }
    }

    package func write(_ ledger: Ledger, replacing expected: StateVersion?, force: Bool) async throws -> StateVersion {
        try FileIO.requireRegularFileOrAbsent(path, what: "state")
        try FileIO.ensureDirectory(directory)
        let currentVersion = try await storedVersion()
        if currentVersion != expected {
            throw StateConflictError(
                "\(path) changed while this run worked: it expected \(Self.describe(expected)) and found \(Self.describe(currentVersion)). "
                    + "Another run wrote it; nothing was written by this one. Run again to plan on the newer state")
        }
        if !force, let expected {
            if ledger.lineage != expected.lineage {
                throw StateConflictError("\(path): refusing to replace lineage \(expected.lineage) with \(ledger.lineage); pass --force to do so")
            }
            if ledger.serial <= expected.serial {
                throw StateConflictError(
                    "\(path): refusing serial \(ledger.serial), which is not newer than the stored \(expected.serial); pass --force to do so")
            }
        }
        // Only the run headers are needed: the journal is scanned, not held (at a million operations it is
        // several times the size of the state).
        var merged = Set<String>()
        var journal = false
        try FileIO.forEachLine(journalPath, what: "state journal") { line in
            journal = true
            StateAssembly.addRun(line, to: &merged)
        }
        try FileIO.replaceAtomically(path, with: StateFileFormat.encode(ledger, mergedRuns: merged), what: "state")
        try FileIO.replaceAtomically(serialPath, with: StateAssembly.serialRecord(ledger), what: "state serial record")
        // The state now holds everything the journal did (and names its runs, in case this unlink is lost).
        if journal, unlink(journalPath) != 0, errno != ENOENT {
            warn("\(journalPath): could not remove the merged journal: \(FileIO.errnoText()); it will be skipped when read")
        }
        return StateVersion(lineage: ledger.lineage, serial: ledger.serial)
    }

    static func describe(_ version: StateVersion?) -> String {
        guard let version else { return "no state" }
        return "serial \(version.serial) of lineage \(version.lineage)"
    }

    // MARK: Journal

    package func openJournal(base: StateVersion, expectedBytes: Int) async throws -> any StateJournal {
        try FileIO.ensureDirectory(directory)
        let fd = open(journalPath, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw StateError("\(journalPath): cannot open the state journal: \(FileIO.errnoText()); nothing was sent")
        }
        var info = stat()
        if fstat(fd, &info) == 0, info.st_size > 0 {
            close(fd)
            throw StateError(
                "\(journalPath): holds records that are not in the state yet; nothing was sent. Run again: the next run folds them in first")
        }
        // Reserve the room the run's records will need, so a full disk stops it before the first request.
        let room = Int64(expectedBytes)
        if let failure = Self.reserve(fd, bytes: room) {
            close(fd)
            unlink(journalPath)
            throw StateError(
                "\(journalPath): cannot reserve \(room / 1024) KiB for the state journal: \(FileIO.errnoText(failure)); free some space. Nothing was sent"
            )
        }
        let header = JournalFormat.RunHeader(run: newLineage(), lineage: base.lineage, baseSerial: base.serial, started: now())
        if let failure = FileIO.writeAll(fd, JournalFormat.encode(header)) {
            close(fd)
            unlink(journalPath)
            throw StateError("\(journalPath): cannot write the state journal: \(FileIO.errnoText(failure)); nothing was sent")
        }
        return LocalJournal(fd: fd, path: journalPath, bytes: JournalFormat.encode(header).count)
    }

    /// glibc's fallocate is not in Swift's Glibc module (it needs _GNU_SOURCE), so it is looked up once.
    private static let fallocate: (@convention(c) (Int32, Int32, Int64, Int64) -> Int32)? = {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "fallocate") else { return nil }
        return unsafeBitCast(symbol, to: (@convention(c) (Int32, Int32, Int64, Int64) -> Int32).self)
    }()

    /// fallocate(2) with FALLOC_FL_KEEP_SIZE: the blocks are the file's, the size (what readers see) stays.
    /// Where the filesystem cannot reserve, free space is checked instead.
    static func reserve(_ fd: Int32, bytes: Int64) -> Int32? {
        if let fallocate = Self.fallocate {
            if fallocate(fd, 1, 0, bytes) == 0 { return nil }
            let failure = errno
            if failure == ENOSPC || failure == EDQUOT { return failure }
        }
        var info = statvfs()
        if fstatvfs(fd, &info) == 0, Int64(info.f_bavail) * Int64(info.f_frsize) < bytes { return ENOSPC }
        return nil
    }

    // MARK: Locking

    package func lock(operation: String, timeout: Duration) async throws -> StateLock {
        // Checked before anything is created beside it: a FIFO once hung plan, a device file aborted it.
        try FileIO.requireRegularFileOrAbsent(path, what: "state")
        try FileIO.ensureDirectory(directory)
        let deadline = ContinuousClock.now + timeout
        while true {
            switch try acquireOnce(operation: operation, deadline: deadline) {
            case .acquired(let lock):
                startRenewing(lock)
                return lock
            case .held(let holder):
                if ContinuousClock.now >= deadline { throw StateLockedError(holder: holder, store: path, now: now()) }
                // Waiting for another process to finish has no event to wait on here; poll the lock.
                try await Task.sleep(for: min(.milliseconds(250), deadline - ContinuousClock.now))
            }
        }
    }

    enum Attempt {
        case acquired(StateLock)
        case held(LockInfo)
    }

    private func acquireOnce(operation: String, deadline: ContinuousClock.Instant) throws -> Attempt {
        try withDirectoryLock(until: deadline) {
            // The lease is counted from before the write: the holder never believes it longer than it is.
            let started = StateLock.now()
            let created = now()
            let mine = LockInfo(
                id: newLineage(), who: "\(identity.user)@\(identity.host)", host: identity.host, pid: identity.pid,
                processStart: identity.processStart, operation: operation, created: created,
                expires: created.addingTimeInterval(lease), version: version)
            if let existing = try readLock() {
                guard let reason = LockDocument.staleReason(existing, identity: identity, now: now()) else { return .held(existing) }
                warn("took over the state lock \(existing.id) of \(existing.who) (pid \(existing.pid), \(existing.operation)): \(reason)")
            }
            try writeLock(mine)
            return .acquired(StateLock(info: mine, validUntil: started + lease))
        }
    }

    func readLock() throws -> LockInfo? {
        guard let bytes = try FileIO.readIfPresent(lockPath, what: "state lock") else { return nil }
        return try LockDocument.decode(bytes, source: lockPath, remedy: "if no fcmctl run is active, delete that file")
    }

    private func writeLock(_ lock: LockInfo) throws {
        try FileIO.replaceAtomically(lockPath, with: LockDocument.encode(lock), what: "state lock")
    }

    /// `deadline`: how long taking the lock may wait (`--lock-timeout`). The directory's flock is held for
    /// moments by a live fcmctl, so it gets two seconds at least; a process that holds it longer (a hung run, a
    /// backup tool) is reported when the deadline passes instead of blocking the run without end.
    private func withDirectoryLock<T>(until deadline: ContinuousClock.Instant? = nil, _ body: () throws -> T) throws -> T {
        let fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw StateError("\(directory): cannot open the state directory: \(FileIO.errnoText())") }
        defer { close(fd) }
        if let deadline {
            let giveUp = max(deadline, ContinuousClock.now + .seconds(2))
            while flock(fd, LOCK_EX | LOCK_NB) != 0 {
                if errno == EINTR { continue }
                guard errno == EWOULDBLOCK else {
                    throw StateError("\(directory): cannot lock the state directory: \(FileIO.errnoText())")
                }
                if ContinuousClock.now >= giveUp {
                    throw StateError(
                        "\(directory): another process holds the state directory's lock (flock) for longer than --lock-timeout allows; "
                            + "find it with `fuser -v \(directory)` or retry with a longer --lock-timeout")
                }
                usleep(10_000)
            }
        } else {
            while flock(fd, LOCK_EX) != 0 {
                if errno != EINTR { throw StateError("\(directory): cannot lock the state directory: \(FileIO.errnoText())") }
            }
        }
        defer { flock(fd, LOCK_UN) }
        return try body()
    }

    /// Renewal runs on a thread of its own, not on Swift's shared pool: a run that keeps the pool busy
    /// (blocking journal writes, or a test process full of commands) must not starve its lease, which the
    /// fence now holds it to.
    private func startRenewing(_ lock: StateLock) {
        let timer = RenewalThread(interval: max(lease / 3, 0.05)) { [weak self] in self?.renew(lock) }
        mutex.withLock { renewals[lock.info.id] = timer }
    }

    private func renew(_ lock: StateLock) {
        do {
            try withDirectoryLock {
                guard let current = try readLock(), current.id == lock.info.id else {
                    lock.markLost()
                    warn("the state lock \(lock.info.id) was taken over or removed; stopping before the next request")
                    return
                }
                var renewed = current
                let started = StateLock.now()
                renewed.expires = now().addingTimeInterval(lease)
                try writeLock(renewed)
                lock.confirm(renewedAt: started, lease: lease)
            }
        } catch {
            // The next tick tries again; the lease outlasts two missed renewals.
        }
    }

    package func unlock(_ lock: StateLock) async throws {
        mutex.withLock { renewals.removeValue(forKey: lock.info.id) }?.cancel()
        try withDirectoryLock {
            guard let current = try readLock(), current.id == lock.info.id else { return }
            if unlink(lockPath) != 0 && errno != ENOENT {
                throw StateError("\(lockPath): cannot remove the state lock: \(FileIO.errnoText())")
            }
        }
    }

    package func forceUnlock(id: String) async throws -> LockInfo {
        try withDirectoryLock {
            guard let current = try readLock() else { throw StateError("\(path) is not locked") }
            guard current.id == id else {
                throw StateError("\(path) is locked by \(current.describe(now: now())), not by lock id \(id); nothing was removed")
            }
            if unlink(lockPath) != 0 { throw StateError("\(lockPath): cannot remove the state lock: \(FileIO.errnoText())") }
            return current
        }
    }

    package func currentLock() async throws -> LockInfo? { try readLock() }
}

/// Appends journal lines with one write(2) per call: once it returns, the kernel has them, and they
/// survive the process being killed. (fsync is left to the state write: a power cut is not a kill.)
final class LocalJournal: StateJournal, @unchecked Sendable {
    private let fd: Int32
    private let path: String
    private let mutex = NSLock()
    private var written: Int
    private var buffer: [UInt8] = []
    private var broken: String?

    init(fd: Int32, path: String, bytes: Int) {
        self.fd = fd
        self.path = path
        self.written = bytes
    }

    deinit { close(fd) }

    func append(_ entries: [JournalEntry]) async throws {
        try mutex.withLock {
            // After a failed write the last line may be torn; anything appended behind it would be damaged.
            if let broken { throw StateError(broken) }
            buffer.removeAll(keepingCapacity: true)
            JournalFormat.encode(entries, into: &buffer)
            if let failure = FileIO.writeAll(fd, buffer) {
                broken = "\(path): cannot write the state journal: \(FileIO.errnoText(failure))"
                throw StateError(broken!)
            }
            written += buffer.count
        }
    }

    var bytesWritten: Int { get async { mutex.withLock { written } } }
}

/// Calls `tick` every `interval` seconds on its own thread until cancelled.
final class RenewalThread: @unchecked Sendable {
    private let condition = NSCondition()
    private var cancelled = false

    init(interval: TimeInterval, tick: @escaping @Sendable () -> Void) {
        let thread = Thread { [self] in
            while true {
                condition.lock()
                let deadline = Date().addingTimeInterval(interval)
                while !cancelled && condition.wait(until: deadline) {}
                let stop = cancelled
                condition.unlock()
                if stop { return }
                tick()
            }
        }
        thread.name = "fcmctl-lease"
        thread.start()
    }

    func cancel() {
        condition.lock()
        cancelled = true
        condition.signal()
        condition.unlock()
    }
}
