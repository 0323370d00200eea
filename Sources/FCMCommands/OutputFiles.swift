import Foundation

/// Files fcmctl writes for a person or a pipeline (`import -o`, `--json-into`, `--events`), created with the
/// mode asked for whatever the umask: 0600 for anything holding full registrations, 0644 for redacted
/// documents. Foundation's writers leave the mode to the umask, and under `umask 000` an import file (every
/// registration of a fleet) came out world-writable.
enum OutputFiles {
    static let secret: mode_t = 0o600
    static let document: mode_t = 0o644

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// Writes `data` to `path`; `exclusive` refuses a file that exists. Replaced files are written whole
    /// under a temporary name first, so a reader never sees half a document.
    static func write(_ data: Data, to path: String, mode: mode_t, exclusive: Bool = false) throws {
        if exclusive {
            let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
            guard fd >= 0 else { throw Failure(description: "\(path): \(String(cString: strerror(errno)))") }
            defer { close(fd) }
            try fill(fd, data, path: path, mode: mode)
            return
        }
        let temporary = "\(path).tmp-\(getpid())"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode)
        guard fd >= 0 else { throw Failure(description: "\(path): \(String(cString: strerror(errno)))") }
        do {
            try fill(fd, data, path: path, mode: mode)
            close(fd)
        } catch {
            close(fd)
            unlink(temporary)
            throw error
        }
        guard rename(temporary, path) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(temporary)
            throw Failure(description: "\(path): \(reason)")
        }
    }

    /// A file opened for lines appended as they come (`--events FILE`), truncated first.
    static func appending(_ path: String, mode: mode_t) throws -> FileHandle {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode)
        guard fd >= 0 else { throw Failure(description: "\(path): \(String(cString: strerror(errno)))") }
        _ = fchmod(fd, mode)
        return FileHandle(fileDescriptor: fd, closeOnDealloc: true)
    }

    private static func fill(_ fd: Int32, _ data: Data, path: String, mode: mode_t) throws {
        // open's mode passes through the umask, which may only take bits away; fchmod sets exactly `mode`.
        _ = fchmod(fd, mode)
        try data.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = Foundation.write(fd, buffer.baseAddress! + offset, buffer.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    throw Failure(description: "\(path): \(String(cString: strerror(errno)))")
                }
                offset += written
            }
        }
    }
}
