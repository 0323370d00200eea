import FCMCore
import Foundation
import Synchronization

/// A file opened for appends, with one write(2) per append: once it returns, the kernel has the bytes, and
/// they survive the process being killed. (fsync is left to the state write: a power cut is not a kill.)
final class FileAppender: AppendableObject {
    private let fd: Int32
    private let path: String
    /// After a failed write the last line may be torn; anything appended behind it would be damaged.
    private let broken = Mutex<String?>(nil)

    /// Opens (creating, mode 0600) `path` for appends and reserves `reserving` bytes for it.
    init(path: String, what: String, reserving bytes: Int64) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw StateError("\(path): cannot open the \(what): \(FileIO.errnoText()); nothing was sent") }
        if let failure = Self.reserve(fd, bytes: bytes) {
            close(fd)
            unlink(path)
            throw StateError(
                "\(path): cannot reserve \(bytes / 1024) KiB for the \(what): \(FileIO.errnoText(failure)); free some space. Nothing was sent")
        }
        self.fd = fd
        self.path = path
    }

    deinit { close(fd) }

    func append(_ bytes: [UInt8]) throws {
        try broken.withLock { broken in
            if let broken { throw StateError(broken) }
            if let failure = FileIO.writeAll(fd, bytes) {
                broken = "\(path): cannot write the state journal: \(FileIO.errnoText(failure))"
                throw StateError(broken!)
            }
        }
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
}
