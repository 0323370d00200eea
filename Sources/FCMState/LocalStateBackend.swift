import FCMCore
import Foundation

package struct StateError: Error, CustomStringConvertible, Sendable {
    package var description: String
}

/// The ledger as a JSON file. Writes go to a temporary file in the same directory (mode 0600: the
/// state names registrations), are flushed to disk, then renamed over the old file, so a crash leaves
/// either the old or the new state, never half of one.
package final class LocalStateBackend: StateBackend, @unchecked Sendable {
    package let path: String
    private let lock = NSLock()
    private var journal: FileHandle?

    package init(path: String) { self.path = path }

    deinit { try? journal?.close() }

    /// Completed operations since the last full write, one JSON object per line, next to the state.
    package var journalPath: String { path + ".journal" }

    package var displayName: String { path }

    package func read() throws -> Ledger? {
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw StateError(description: "\(path): cannot read the state file: \(error.localizedDescription)")
        }
        let ledger: Ledger
        do {
            ledger = try JSONDecoder().decode(Ledger.self, from: data)
        } catch {
            throw StateError(description: "\(path): the state file is not valid fcmctl state (\(Self.describe(error))); restore it from a backup or move it aside to start afresh")
        }
        if ledger.version > Ledger.currentVersion {
            throw StateError(description: "\(path): state format version \(ledger.version) is newer than this fcmctl understands (\(Ledger.currentVersion)); upgrade fcmctl")
        }
        return try replayJournal(onto: ledger)
    }

    /// Applies what an interrupted run recorded after the last full write. A torn last line (the process
    /// died mid-write) is ignored: its operation will be found again by the next refresh.
    func replayJournal(onto ledger: Ledger) throws -> Ledger {
        guard let data = FileManager.default.contents(atPath: journalPath), !data.isEmpty else { return ledger }
        var replayed = ledger
        let decoder = JSONDecoder()
        for line in data.split(separator: UInt8(ascii: "\n")) {
            guard let event = try? decoder.decode(LedgerEvent.self, from: Data(line)) else { continue }
            event.apply(to: &replayed)
        }
        return replayed
    }

    package func append(_ events: [LedgerEvent]) throws {
        guard !events.isEmpty else { return }
        var bytes = Data()
        for event in events {
            bytes.append(contentsOf: event.journalLine.utf8)
            bytes.append(UInt8(ascii: "\n"))
        }
        try lock.withLock {
            if journal == nil {
                let directory = (path as NSString).deletingLastPathComponent
                if !directory.isEmpty { try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true) }
                let fd = open(journalPath, O_WRONLY | O_CREAT | O_APPEND, 0o600)
                guard fd >= 0 else { throw StateError(description: "\(journalPath): cannot open the state journal: \(String(cString: strerror(errno)))") }
                journal = FileHandle(fileDescriptor: fd, closeOnDealloc: true)
            }
            // One write per batch of events, straight to the kernel: it survives the process being killed.
            try journal!.write(contentsOf: bytes)
        }
    }

    package func write(_ ledger: Ledger) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        let data = try encoder.encode(ledger)
        let directory = (path as NSString).deletingLastPathComponent
        if !directory.isEmpty {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        }
        let temporary = "\(path).tmp-\(getpid())"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        guard fd >= 0 else { throw StateError(description: "\(temporary): cannot create: \(String(cString: strerror(errno)))") }
        var ok = data.withUnsafeBytes { raw -> Bool in
            var offset = 0
            while offset < raw.count {
                let written = Foundation.write(fd, raw.baseAddress! + offset, raw.count - offset)
                if written <= 0 { return false }
                offset += written
            }
            return true
        }
        ok = ok && fsync(fd) == 0
        let writeErrno = errno
        close(fd)
        guard ok, rename(temporary, path) == 0 else {
            unlink(temporary)
            throw StateError(description: "\(path): cannot write the state: \(String(cString: strerror(ok ? errno : writeErrno)))")
        }
        // The full state now includes everything the journal held.
        lock.withLock {
            try? journal?.close()
            journal = nil
            unlink(journalPath)
        }
    }

    static func describe(_ error: any Error) -> String {
        switch error {
        case DecodingError.keyNotFound(let key, _): "missing field '\(key.stringValue)'"
        case DecodingError.typeMismatch(_, let context), DecodingError.valueNotFound(_, let context):
            "unexpected value at '\(context.codingPath.map(\.stringValue).joined(separator: "."))'"
        case DecodingError.dataCorrupted: "not JSON"
        default: "\(error)"
        }
    }
}
