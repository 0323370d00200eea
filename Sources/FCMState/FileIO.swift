import FCMCore
import Foundation

/// Thin POSIX helpers that report errno in words: every failure here is one a person must act on
/// (permissions, a full disk, a read-only mount), so it is named, never swallowed.
enum FileIO {
    static func errnoText(_ code: Int32 = errno) -> String { String(cString: strerror(code)) }

    /// nil when the file does not exist; an error when it exists but cannot be reached.
    static func readIfPresent(_ path: String, what: String) throws -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        if fd < 0 {
            let code = errno
            if code == ENOENT { return try checkParentReadable(path, what: what) }
            throw StateError("\(path): cannot read the \(what): \(errnoText(code)); check the permissions of the file and its directory")
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw StateError("\(path): cannot read the \(what): \(errnoText())") }
        if (info.st_mode & S_IFMT) == S_IFDIR { throw StateError("\(path): the \(what) path is a directory") }
        // Room for the size fstat gave plus a little: a file that grows meanwhile costs another read, not a
        // doubling of a buffer the size of a fleet's journal.
        var bytes = [UInt8](repeating: 0, count: Int(info.st_size) + 4096)
        var offset = 0
        while true {
            if offset == bytes.count { bytes.append(contentsOf: [UInt8](repeating: 0, count: max(65536, bytes.count / 8))) }
            let count = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress! + offset, $0.count - offset) }
            if count < 0 {
                if errno == EINTR { continue }
                throw StateError("\(path): cannot read the \(what): \(errnoText())")
            }
            if count == 0 { break }
            offset += count
        }
        bytes.removeLast(bytes.count - offset)
        return bytes
    }

    /// Calls `body` with each line of the file (without its newline), reading a megabyte at a time, so a
    /// journal of a million operations is scanned without being held. A missing file has no lines.
    static func forEachLine(_ path: String, what: String, _ body: (ArraySlice<UInt8>) throws -> Void) throws {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        if fd < 0 {
            if errno == ENOENT { return }
            throw StateError("\(path): cannot read the \(what): \(errnoText()); check the permissions of the file and its directory")
        }
        defer { close(fd) }
        var carry: [UInt8] = []
        // Sized to the file, up to 1 MiB: a lock or a small journal read into a zeroed 1 MiB buffer paid 256
        // page faults for nothing.
        var status = stat()
        let size = fstat(fd, &status) == 0 ? Int(status.st_size) : 1 << 20
        var chunk = [UInt8](repeating: 0, count: min(max(size + 1, 4096), 1 << 20))
        while true {
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress!, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw StateError("\(path): cannot read the \(what): \(errnoText())")
            }
            if count == 0 { break }
            var start = 0
            for index in 0..<count where chunk[index] == UInt8(ascii: "\n") {
                if carry.isEmpty {
                    try body(chunk[start..<index])
                } else {
                    carry += chunk[start..<index]
                    try body(carry[...])
                    carry.removeAll(keepingCapacity: true)
                }
                start = index + 1
            }
            carry += chunk[start..<count]
        }
        if !carry.isEmpty { try body(carry[...]) }
    }

    /// ENOENT from a directory we may not search looks like "no state": it is not, so it is reported.
    private static func checkParentReadable(_ path: String, what: String) throws -> [UInt8]? {
        let directory = PathText.directory(of: path)
        guard !directory.isEmpty else { return nil }
        if access(directory, F_OK) != 0 && errno != ENOENT {
            throw StateError("\(directory): cannot look for the \(what): \(errnoText()); check the directory's permissions")
        }
        if access(directory, F_OK) == 0, access(directory, R_OK | X_OK) != 0 {
            throw StateError("\(directory): cannot read the state directory: \(errnoText()); check its permissions")
        }
        return nil
    }

    /// A state path names a regular file or nothing yet: a FIFO would block a read forever, a device would be
    /// read without end, and a directory is a mistake to report, not to lock beside.
    static func requireRegularFileOrAbsent(_ path: String, what: String) throws {
        var info = stat()
        guard lstat(path, &info) == 0 else { return }
        var kind = info.st_mode & S_IFMT
        if kind == S_IFLNK {
            guard stat(path, &info) == 0 else { return }  // a dangling link: written through, as before
            kind = info.st_mode & S_IFMT
        }
        guard kind != S_IFREG else { return }
        let name: String
        switch kind {
        case S_IFDIR: name = "a directory"
        case S_IFIFO: name = "a named pipe (FIFO)"
        case S_IFCHR, S_IFBLK: name = "a device"
        case S_IFSOCK: name = "a socket"
        default: name = "not a regular file"
        }
        throw StateError("\(path): the \(what) path is \(name); state.path (or --state) must name a regular file, or one that does not exist yet")
    }

    /// Creates the state directory (mode 0700: the state names registrations) and its parents.
    static func ensureDirectory(_ directory: String) throws {
        guard !directory.isEmpty else { return }
        var info = stat()
        if stat(directory, &info) == 0 {
            guard (info.st_mode & S_IFMT) == S_IFDIR else { throw StateError("\(directory): is not a directory") }
            return
        }
        let parent = PathText.directory(of: directory)
        if !parent.isEmpty && parent != directory { try ensureDirectory(parent) }
        if mkdir(directory, 0o700) != 0 && errno != EEXIST {
            throw StateError("\(directory): cannot create the state directory: \(errnoText())")
        }
    }

    static func writeAll(_ fd: Int32, _ bytes: [UInt8]) -> Int32? {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + offset, $0.count - offset) }
            if written < 0 {
                if errno == EINTR { continue }
                return errno
            }
            if written == 0 { return EIO }
            offset += written
        }
        return nil
    }

    /// Writes a new file beside `path` (mode 0600), flushes it to disk and renames it over `path`, so a
    /// crash leaves the old file or the new one, never half of one.
    static func replaceAtomically(_ path: String, with bytes: [UInt8], what: String) throws {
        let directory = PathText.directory(of: path)
        try ensureDirectory(directory)
        let temporary = "\(path).tmp-\(getpid())"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw StateError("\(path): cannot write the \(what): \(errnoText()); check that the directory is writable")
        }
        var failure = writeAll(fd, bytes)
        if failure == nil, fsync(fd) != 0 { failure = errno }
        close(fd)
        if failure == nil, rename(temporary, path) != 0 { failure = errno }
        if let failure {
            unlink(temporary)
            throw StateError("\(path): cannot write the \(what): \(errnoText(failure))")
        }
        syncDirectory(directory)
    }

    static func syncDirectory(_ directory: String) {
        let fd = open(directory.isEmpty ? "." : directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return }
        fsync(fd)
        close(fd)
    }
}
