import Foundation

/// A file's bytes in one buffer: `Array(Data(contentsOf:))` holds two copies at once, which for a
/// device file of a gigabyte is the difference between loading and running out of memory.
enum FileBytes {
    struct CannotRead: Error, CustomStringConvertible {
        let reason: String
        var description: String { reason }
    }

    /// A regular file opened for reading, and its size when opened; the caller closes it.
    static func open(_ path: String) throws -> (descriptor: Int32, size: Int) {
        let descriptor = Foundation.open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw CannotRead(reason: errno == ENOENT ? "no such file" : String(cString: strerror(errno))) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else {
            let reason = String(cString: strerror(errno))
            close(descriptor)
            throw CannotRead(reason: reason)
        }
        guard (status.st_mode & S_IFMT) == S_IFREG else {
            close(descriptor)
            throw CannotRead(reason: (status.st_mode & S_IFMT) == S_IFDIR ? "it is a directory" : "it is not a regular file")
        }
        return (descriptor, Int(status.st_size))
    }

    static func read(_ path: String) throws -> [UInt8] {
        let (descriptor, size) = try open(path)
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var capacity = max(size, 0) + 1
        var count = 0
        // Read until end of file, not the size stat gave: a file still being written grows.
        while true {
            if count == capacity { capacity *= 2 }
            if bytes.count < capacity { bytes.append(contentsOf: repeatElement(0, count: capacity - bytes.count)) }
            let got = bytes.withUnsafeMutableBytes { buffer in
                Foundation.read(descriptor, buffer.baseAddress! + count, capacity - count)
            }
            if got < 0 {
                if errno == EINTR { continue }
                throw CannotRead(reason: String(cString: strerror(errno)))
            }
            if got == 0 { break }
            count += got
        }
        bytes.removeLast(bytes.count - count)
        return bytes
    }
}
