import Crypto
import FCMCore
import Foundation

/// Reading and writing `plan -out` files: JSON, mode 0600 (a plan names registrations), replaced atomically.
package enum SavedPlanFile {
    package static func write(_ plan: SavedPlan, to path: String) throws {
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

    package static func read(_ path: String) throws -> SavedPlan {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw SavedPlanError("\(path): cannot read the plan file")
        }
        // The version is looked at first, so a newer plan gets a clear refusal rather than a decoding error.
        if let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any], let version = object["formatVersion"] as? Int {
            if version > SavedPlan.currentFormatVersion {
                throw SavedPlanError(
                    "\(path): plan format version \(version) is newer than this fcmctl understands (\(SavedPlan.currentFormatVersion)); apply it with the fcmctl that made it, or plan again"
                )
            }
            // An older plan has no observations and no digest, so it cannot be checked as a whole: stale, not broken.
            if version < SavedPlan.currentFormatVersion {
                throw Outdated(
                    "\(path): plan format version \(version) carries no digest and no observations, so it cannot be checked as a whole. Nothing was sent; run plan again"
                )
            }
        }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        do {
            return try decoder.decode(SavedPlan.self, from: data)
        } catch {
            throw SavedPlanError("\(path): not a plan written by `fcmctl plan -out`: \(DecodingProblem.text(error)). Pass the file plan -out wrote")
        }
    }
}

extension SavedPlanFile {
    /// A plan this fcmctl could read but will not run as it is: exit 5, like any other stale plan.
    package struct Outdated: Error, CustomStringConvertible {
        package var description: String
        init(_ description: String) { self.description = description }
    }
}

/// The saved plan's digest: SHA-256 over the canonical bytes of every section (SavedPlan.digestSections).
/// A reviewer approves the digest `plan -out` printed; `apply FILE --expect-digest` runs only that plan.
package enum SavedPlanDigest {
    package static func sha256(_ data: Data) -> String {
        SHA256.hash(data: data).map { String(format: "%02x", $0) }.joined()
    }

    package static func seal(_ plan: inout SavedPlan) throws {
        plan.digest = nil
        plan.digestParts = nil
        let (digest, parts) = try plan.computeDigest(sha256: sha256)
        plan.digest = digest
        plan.digestParts = parts
    }

    /// nil when the file is as `plan -out` wrote it; otherwise why not, naming the edited sections when the
    /// file still says what they were.
    package static func mismatch(_ plan: SavedPlan) -> String? {
        guard let recorded = plan.digest else {
            return "the plan has no digest, so it was edited after `plan -out` wrote it"
        }
        guard let (digest, parts) = try? plan.computeDigest(sha256: sha256) else { return "the plan's digest cannot be computed" }
        if digest == recorded { return nil }
        let edited = parts.keys.sorted().filter { plan.digestParts?[$0] != parts[$0] }
        if edited.isEmpty || plan.digestParts == nil {
            return "the plan's content does not match its digest \(recorded): the file was edited after `plan -out` wrote it"
        }
        return "the plan's content does not match its digest \(recorded): \(edited.joined(separator: ", ")) "
            + "\(edited.count == 1 ? "was" : "were") edited after `plan -out` wrote it"
    }

    /// `sha256:HEX` or a bare HEX, any case, compared as the same digest.
    package static func normalized(_ text: String) -> String {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines).lowercased()
        return trimmed.hasPrefix("sha256:") ? trimmed : "sha256:" + trimmed
    }
}

package enum ManifestDigest {
    /// sha256 over every manifest file's path and bytes, in path order; a device file stands in by
    /// `sha256:HEX` of its bytes, hashed as it was streamed (so saved plans made before device files were
    /// streamed, whose digests covered their bytes, are stale; plans of YAML-only manifests are not).
    package static func of(_ sources: [String: [UInt8]], deviceFiles: [String: String] = [:]) -> String {
        var hash = SHA256()
        for path in Set(sources.keys).union(deviceFiles.keys).sorted() {
            hash.update(data: Data(path.utf8))
            hash.update(data: Data([0]))
            if let bytes = sources[path] {
                hash.update(data: Data(bytes))
            } else if let digest = deviceFiles[path] {
                hash.update(data: Data("sha256:\(digest)".utf8))
            }
            hash.update(data: Data([0]))
        }
        return hash.finalize().map { String(format: "%02x", $0) }.joined()
    }
}
