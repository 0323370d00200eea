import Crypto
import FCMCore
import Foundation

/// Reading and writing `plan -out` files: JSON, mode 0600 (a plan names registrations), replaced atomically.
enum SavedPlanFile {
    static func write(_ plan: SavedPlan, to path: String) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        let data = try encoder.encode(plan) + Data("\n".utf8)
        let temporary = path + ".tmp-\(getpid())"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw SavedPlanError("\(path): cannot write the plan: \(String(cString: strerror(errno)))") }
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
        close(fd)
        guard ok, rename(temporary, path) == 0 else {
            unlink(temporary)
            throw SavedPlanError("\(path): cannot write the plan: \(String(cString: strerror(errno)))")
        }
    }

    static func read(_ path: String) throws -> SavedPlan {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw SavedPlanError("\(path): cannot read the plan file")
        }
        // The version is looked at first, so a newer plan gets a clear refusal rather than a decoding error.
        if let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any], let version = object["formatVersion"] as? Int,
            version > SavedPlan.currentFormatVersion
        {
            throw SavedPlanError(
                "\(path): plan format version \(version) is newer than this fcmctl understands (\(SavedPlan.currentFormatVersion)); apply it with the fcmctl that made it, or plan again"
            )
        }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        do {
            return try decoder.decode(SavedPlan.self, from: data)
        } catch {
            throw SavedPlanError("\(path): not a plan written by `fcmctl plan -out` (\(error))")
        }
    }
}

enum ManifestDigest {
    /// sha256 over every manifest file's path and bytes, in path order.
    static func of(_ sources: [String: [UInt8]]) -> String {
        var hash = SHA256()
        for path in sources.keys.sorted() {
            hash.update(data: Data(path.utf8))
            hash.update(data: Data([0]))
            hash.update(data: Data(sources[path]!))
            hash.update(data: Data([0]))
        }
        return hash.finalize().map { String(format: "%02x", $0) }.joined()
    }
}
