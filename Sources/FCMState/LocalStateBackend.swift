import FCMCore
import Foundation

package struct StateError: Error, CustomStringConvertible, Sendable {
    package var description: String
}

/// The ledger as a JSON file. Writes go to a temporary file in the same directory (mode 0600: the
/// state names registrations), are flushed to disk, then renamed over the old file, so a crash leaves
/// either the old or the new state, never half of one.
package struct LocalStateBackend: StateBackend {
    package let path: String

    package init(path: String) { self.path = path }

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
        return ledger
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
