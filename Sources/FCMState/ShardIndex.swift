import FCMCore

/// The index of a sharded state (format version 5), kept at the state's own object name: the only object of the
/// state that is ever replaced, so the compare-and-swap of a write is on it alone. It names lineage, serial,
/// project, the journal runs folded in, and per shard the immutable object holding it with that object's
/// SHA-256 and size; its checksum (the last field, as in a state document) covers everything before it.
///
///     {
///     "version": 5,
///     "lineage": "…",
///     "serial": 12,
///     "project": {"id": "…"},
///     "shard_count": 4,
///     "topic_names": ["news", null, "weather"],
///     "group_names": ["appUser-Chris"],
///     "shards": [
///       {"object": "state.json.shards/0000-1f2e….json", "sha256": "…", "bytes": 1234, "declared": "9c0e…"},
///       …
///     ],
///     "checksum": "sha256:…"
///     }
///
/// `declared` is the digest of what the last apply declared for the shard's registrations (ShardDigests), written
/// only where the shard's records are all accounted for by it: `plan --refresh=changed` reads only the shards whose
/// digest differs from its manifests'.
///
/// Shard `i` holds the records StateShards.split puts in shard `i`, as ShardEncoder writes them: topics and
/// groups by their number in `topic_names` and `group_names` (ShardNames). An object's name carries a prefix of its SHA-256, so a shard is never
/// rewritten in place: a write puts only shards whose bytes changed, and the old index still names whole old
/// shards until the new one replaces it. An fcmctl that knows only version 4 refuses an index by its version.
package struct ShardIndex: Sendable, Equatable {
    package static let version = 5

    package struct Entry: Sendable, Equatable {
        /// Relative to the state object's own location (`state.json.shards/…` beside `state.json`).
        package var object: String
        package var sha256: String
        package var bytes: Int
        /// `ShardDigests.recorded` of the shard's records; nil (not written) when it has none.
        package var declared: UInt64?
    }

    package var lineage: String
    package var serial: Int
    package var project: ProjectBinding
    package var mergedRuns: Set<String>
    package var shards: [Entry]
    package var names = ShardNames()

    package var bits: Int { shards.count.trailingZeroBitCount }

    /// What a reader chooses the shards to load from.
    package var outline: ShardOutline {
        ShardOutline(bits: bits, recorded: shards.map(\.declared), hasGroups: names.groups.contains { $0 != nil })
    }

    static let knownFields: Set<String> = [
        "version", "lineage", "serial", "project", "merged_runs", "shard_count", "topic_names", "group_names", "shards", "checksum",
    ]

    /// The object name of shard `index` with these bytes, relative to the state's location.
    static func objectName(stateName: String, index: Int, digest: String) -> String {
        let number = String(index)
        return stateName + ".shards/" + String(repeating: "0", count: max(0, 4 - number.count)) + number + "-" + digest.prefix(16) + ".json"
    }

    static func sha256(_ bytes: [UInt8]) -> String { StateFileFormat.checksum(bytes[...]) }

    func encode() -> [UInt8] {
        var out = JSONWriter(capacity: 256 + shards.count * 160 + (names.topics.count + names.groups.count) * 32)
        StateFileEncoder.header(&out, version: Self.version, lineage: lineage, serial: serial, project: project, mergedRuns: mergedRuns)
        out.raw(",\n\"shard_count\": ")
        out.int(shards.count)
        out.raw(",\n\"topic_names\": ")
        ShardNames.encodeTable(names.topics, into: &out)
        out.raw(",\n\"group_names\": ")
        ShardNames.encodeTable(names.groups, into: &out)
        out.raw(",\n\"shards\": [")
        for (index, entry) in shards.enumerated() {
            out.raw(index == 0 ? "\n  {\"object\": " : ",\n  {\"object\": ")
            out.string(entry.object)
            out.raw(", \"sha256\": ")
            out.string(entry.sha256)
            out.raw(", \"bytes\": ")
            out.int(entry.bytes)
            if let declared = entry.declared {
                out.raw(", \"declared\": ")
                out.string(StateFileFormat.hex(declared))
            }
            out.raw("}")
        }
        out.raw("\n]")
        return StateFileEncoder.sealed(out)
    }

    /// Whether `bytes` are an index rather than a state document: the version it names, read from the head
    /// this encoder writes, else from the parsed document (a hand-formatted one).
    static func isIndex(_ bytes: [UInt8]) -> Bool {
        let head = Array("{\n\"version\": ".utf8)
        if bytes.count > head.count + 1, Array(bytes.prefix(head.count)) == head {
            let digits = bytes[head.count...].prefix { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
            if let named = Int(String(decoding: digits, as: UTF8.self)), !digits.isEmpty { return named == version }
        }
        return (try? JSONParser.parse(bytes))?["version"]?.int == version
    }

    /// `stateName`: the state object's own name (`state.json`); every shard must lie beside it, in
    /// `state.json.shards/`, so an edited index cannot send a read elsewhere.
    static func decode(_ bytes: [UInt8], source: String, stateName: String) throws -> ShardIndex {
        func invalid(_ field: String, _ problem: String) -> StateError {
            StateError("\(source): the state's index is not valid: field '\(field)' \(problem). \(StateVersionRules.wayOut)")
        }
        let document: JSONValue
        do {
            document = try JSONParser.parse(bytes)
        } catch {
            throw StateError("\(source): the state's index is not valid JSON (\(error)); restore it from a backup")
        }
        guard case .object(let fields) = document else { throw StateError("\(source): the state's index is not a JSON object") }
        guard document["version"]?.int == version else { throw invalid("version", "is not \(version)") }
        if let unknown = fields.keys.filter({ !knownFields.contains($0) }).sorted().first { throw invalid(unknown, "is not a field of an index") }
        try StateFileFormat.verifyChecksum(bytes, source: source)
        guard let lineage = document["lineage"]?.string, !lineage.isEmpty else { throw invalid("lineage", "is missing") }
        guard let serial = document["serial"]?.int, serial >= 0 else { throw invalid("serial", "is missing or negative") }
        guard let list = document["shards"]?.array else { throw invalid("shards", "is missing or not a list") }
        guard let count = document["shard_count"]?.int, count == list.count, count > 0, count & (count - 1) == 0,
            count <= 1 << ShardPolicy.maxBits
        else { throw invalid("shard_count", "is not the number of shards, a power of two") }
        let folder = stateName + ".shards/"
        var shards: [Entry] = []
        shards.reserveCapacity(count)
        for (index, item) in list.enumerated() {
            guard let object = item["object"]?.string, object.hasPrefix(folder), !object.dropFirst(folder.count).contains("/"),
                !object.contains(".."), let digest = item["sha256"]?.string, digest.utf8.count == 64, let size = item["bytes"]?.int,
                size >= 0
            else { throw invalid("shards[\(index)]", "is not an object name beside the state with its sha256 and size") }
            var declared: UInt64?
            if let text = item["declared"] {
                guard let hex = text.string, hex.utf8.count == 16, let value = UInt64(hex, radix: 16) else {
                    throw invalid("shards[\(index)].declared", "is not a 16-digit hexadecimal digest")
                }
                declared = value
            }
            shards.append(Entry(object: object, sha256: digest, bytes: size, declared: declared))
        }
        let project = try StateFileFormat.decodeProject(document["project"], invalid: invalid)
        let merged = Set(document["merged_runs"]?.array?.compactMap(\.string) ?? [])
        let names = ShardNames(
            topics: try ShardNames.decodeTable(document["topic_names"], field: "topic_names", invalid: invalid),
            groups: try ShardNames.decodeTable(document["group_names"], field: "group_names", invalid: invalid))
        return ShardIndex(lineage: lineage, serial: serial, project: project, mergedRuns: merged, shards: shards, names: names)
    }
}
