import Crypto
import FCMCore
import Foundation

/// A directory as object storage: one file per object, named as the object. A file has no generation, so
/// its content stands in for one (a hash of the bytes: a write changes it unless it writes the same bytes,
/// which changes nothing a reader could tell). Conditional writes and deletes compare and act under an
/// flock(2) of the directory, which the kernel releases if the process dies, so taking over a dead holder's
/// lock is never a race between two newcomers, and fcmctl versions that locked the directory the same way
/// are kept out while it is held.
package struct FileObjectStorage: ObjectStorage {
    /// The directory as the state path named it ("" for the working directory).
    package let directory: String
    /// What each object is, for messages ("state", "state lock"); "state object" for others.
    let kinds: [String: String]
    let clock: any RunClock

    package init(directory: String, kinds: [String: String] = [:], clock: any RunClock = SystemClock()) {
        self.directory = directory
        self.kinds = kinds
        self.clock = clock
    }

    package var displayName: String { directory.isEmpty ? "." : directory }

    package func path(_ name: String) -> String {
        directory.isEmpty ? name : directory.hasSuffix("/") ? directory + name : directory + "/" + name
    }

    func kind(_ name: String) -> String { kinds[name] ?? "state object" }

    /// The generation of a file's bytes: never 0, which conditions mean "absent".
    static func generation(_ bytes: [UInt8]) -> Int64 {
        let digest = SHA256.hash(data: bytes)
        let value = digest.prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) } & UInt64(Int64.max)
        return max(1, Int64(value))
    }

    package func get(_ name: String) async throws -> StoredObject? {
        try read(name)
    }

    private func read(_ name: String) throws -> StoredObject? {
        let path = path(name)
        try FileIO.requireRegularFileOrAbsent(path, what: kind(name))
        return try FileIO.readIfPresent(path, what: kind(name)).map { StoredObject(bytes: $0, generation: Self.generation($0)) }
    }

    package func put(_ name: String, _ bytes: [UInt8], ifGenerationMatch: Int64?) async throws -> Int64 {
        let path = path(name)
        try FileIO.requireRegularFileOrAbsent(path, what: kind(name))
        try FileIO.ensureDirectory(directory)
        try await withDirectoryLock {
            if let condition = ifGenerationMatch, (try read(name)?.generation ?? 0) != condition {
                throw ObjectStorageError.preconditionFailed(path)
            }
            try FileIO.replaceAtomically(path, with: bytes, what: kind(name))
        }
        return Self.generation(bytes)
    }

    package func delete(_ name: String, ifGenerationMatch: Int64?) async throws {
        let path = path(name)
        try await withDirectoryLock {
            if let condition = ifGenerationMatch {
                guard let current = try read(name) else { throw ObjectStorageError.notFound(path) }
                if current.generation != condition { throw ObjectStorageError.preconditionFailed(path) }
            }
            if unlink(path) != 0 {
                if errno == ENOENT { throw ObjectStorageError.notFound(path) }
                throw StateError("\(path): cannot remove the \(kind(name)): \(FileIO.errnoText())")
            }
        }
    }

    /// Files of the directory whose names start with `prefix`, without the temporary files of atomic replaces.
    package func list(prefix: String) async throws -> [String] {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: displayName) else { return [] }
        return names.filter { $0.hasPrefix(prefix) && !$0.contains(".tmp-") }.sorted()
    }

    package func forEachLine(_ name: String, _ body: (ArraySlice<UInt8>) -> Void) async throws -> Bool {
        let path = path(name)
        guard access(path, F_OK) == 0 else { return false }
        try FileIO.forEachLine(path, what: kind(name), body)
        return true
    }

    package func openAppendable(_ name: String, reserving bytes: Int) async throws -> (any AppendableObject)? {
        try FileIO.ensureDirectory(directory)
        return try FileAppender(path: path(name), what: kind(name), reserving: Int64(bytes))
    }

    /// The directory's flock is held for moments by a live fcmctl; one held for longer than this (a hung
    /// process, a backup tool) is reported rather than waited on without end.
    static let directoryLockPatience = 10.0

    /// How long a wait with a deadline (DirectoryLockDeadline) still gives the flock once the deadline has
    /// come: a live fcmctl holds it for a compare and a replace, so `--lock-timeout 0` is not refused over
    /// such a moment, and a deadline is never overrun by more than this.
    static let momentaryHold = 0.2

    private func withDirectoryLock<T>(_ body: () throws -> T) async throws -> T {
        let fd = open(displayName, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw StateError("\(displayName): cannot open the state directory: \(FileIO.errnoText())") }
        defer { close(fd) }
        let start = clock.now()
        let deadline = DirectoryLockDeadline.value
        let giveUp = deadline.map { max($0, start + Self.momentaryHold) } ?? start + Self.directoryLockPatience
        while flock(fd, LOCK_EX | LOCK_NB) != 0 {
            if errno == EINTR { continue }
            guard errno == EWOULDBLOCK else { throw StateError("\(displayName): cannot lock the state directory: \(FileIO.errnoText())") }
            let now = clock.now()
            if now >= giveUp {
                throw DirectoryLockBusy(
                    directory: displayName, waited: now - start, holder: FlockHolder.describe(fd: fd), underDeadline: deadline != nil)
            }
            try await clock.sleep(seconds: min(0.01, giveUp - now))
        }
        defer { flock(fd, LOCK_UN) }
        return try body()
    }
}

/// The deadline of whoever waits for the directory's flock with a limit of its own: taking the state lock
/// under `--lock-timeout` (StateManager.lock). The flock is then waited on until that deadline, not for the
/// fixed `directoryLockPatience`, which had made `--lock-timeout 3s` wait 10 s. A task-local value, because
/// the flock is taken deep inside a conditional write that knows nothing of the lock's deadline.
enum DirectoryLockDeadline {
    @TaskLocal static var value: Double?
}

/// Another process held the state directory's flock for longer than this run would wait.
struct DirectoryLockBusy: Error, CustomStringConvertible {
    let directory: String
    let waited: Double
    /// "pid 4242 (python3)", when the system says who holds it.
    let holder: String?
    /// Waited until `--lock-timeout` ran out, rather than for the fixed patience of a write.
    let underDeadline: Bool

    var description: String {
        let who = holder.map { "another process (\($0))" } ?? "another process"
        let find = holder == nil ? "; find it with `fuser -v \(directory)`" : ""
        return "\(directory): \(who) holds the state directory's lock (flock), and this run gave up after \(Self.seconds(waited))\(find). "
            + "A live fcmctl holds it only for moments: wait for that process to finish, or stop it"
            + (underDeadline ? ", or pass a longer --lock-timeout" : "")
    }

    static func seconds(_ value: Double) -> String { value < 10 ? "\((value * 10).rounded() / 10) s" : "\(Int(value.rounded())) s" }
}
