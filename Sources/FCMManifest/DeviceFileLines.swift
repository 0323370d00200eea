import Crypto
import Foundation

/// A device file's lines, read a chunk at a time and hashed as they pass: a fleet's export is held only as the
/// devices parsed from it, never whole (at 10,000,000 devices the file alone is 2.6 GB).
struct DeviceFileLines {
    enum Item {
        /// A line without its line feed; `terminated`: whether one ended it (the last line may have none).
        case line(ArraySlice<UInt8>, terminated: Bool)
        /// A line longer than `DeviceFileReader.maximumLineBytes`, skipped to its end: its length.
        case overlong(Int)
    }

    static let chunkBytes = 1 << 20

    private let descriptor: Int32
    private var buffer: [UInt8]
    private var start = 0
    private var end = 0
    private var atEnd = false
    private var hash = SHA256()
    /// Bytes read so far.
    private(set) var count = 0

    /// The file's size when opened (0 if it cannot be told), for an estimate of its lines.
    let size: Int

    /// Opens `path`; `close()` when done.
    init(path: String) throws {
        descriptor = try FileBytes.open(path).descriptor
        buffer = [UInt8](repeating: 0, count: Self.chunkBytes)
        var status = stat()
        size = fstat(descriptor, &status) == 0 ? Int(status.st_size) : 0
    }

    func close() { _ = Foundation.close(descriptor) }

    /// The SHA-256 of every byte read, as hex; read to the end first.
    var digest: String { hash.finalize().map { String(format: "%02x", $0) }.joined() }

    mutating func next() throws -> Item? {
        var scanned = start
        var skipped = 0
        while true {
            if let newline = Self.lineFeed(in: buffer, from: scanned, to: end) {
                if skipped > 0 {
                    skipped += newline - start
                    start = newline + 1
                    return .overlong(skipped)
                }
                let line = buffer[start..<newline]
                start = newline + 1
                return .line(line, terminated: true)
            }
            if atEnd {
                guard start < end else { return nil }
                defer { start = end }
                if skipped > 0 { return .overlong(skipped + end - start) }
                return .line(buffer[start..<end], terminated: false)
            }
            // No line feed in what is buffered: past the limit, count the rest of the line without keeping it.
            if end - start > DeviceFileReader.maximumLineBytes {
                skipped += end - start
                start = end
            }
            if start > 0 {
                buffer.withUnsafeMutableBufferPointer { all in
                    _ = memmove(all.baseAddress!, all.baseAddress! + start, end - start)
                }
                end -= start
                start = 0
            }
            scanned = end
            if buffer.count - end < Self.chunkBytes / 2 { buffer.append(contentsOf: repeatElement(0, count: Self.chunkBytes)) }
            try fill()
        }
    }

    /// The index of the first line feed in `buffer[from..<to]`: memchr, which reads a word at a time (a fleet's
    /// export is gigabytes, scanned once).
    static func lineFeed(in buffer: [UInt8], from: Int, to: Int) -> Int? {
        guard from < to else { return nil }
        return buffer.withUnsafeBufferPointer { all -> Int? in
            guard let base = all.baseAddress, let found = memchr(base + from, 0x0A, to - from) else { return nil }
            return UnsafeRawPointer(base).distance(to: UnsafeRawPointer(found))
        }
    }

    private mutating func fill() throws {
        while true {
            let got = buffer.withUnsafeMutableBytes { all in Foundation.read(descriptor, all.baseAddress! + end, all.count - end) }
            if got < 0 {
                if errno == EINTR { continue }
                throw FileBytes.CannotRead(reason: String(cString: strerror(errno)))
            }
            if got == 0 {
                atEnd = true
                return
            }
            buffer.withUnsafeBytes { all in hash.update(bufferPointer: UnsafeRawBufferPointer(rebasing: all[end..<(end + got)])) }
            end += got
            count += got
            return
        }
    }
}
