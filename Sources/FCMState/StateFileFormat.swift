import Crypto
import FCMCore

/// The state document. Version 4 is version 3 with the project the state belongs to (`project`: `id`,
/// `sender_id`), so a run for another project refuses it. It is a new version rather than an optional field of
/// version 3: an fcmctl that knows only version 3 then says "newer than this fcmctl understands; upgrade
/// fcmctl" instead of calling the field damage, and it can never write a bound state back without its binding.
/// Versions 1 to 3 are read and upgraded (and bound) on the next write. Version 3 is version 2 with a checksum
/// of everything before it, so a damaged or hand-altered state is refused instead of being read as other
/// records. Version 2 stores each registration once (`tokens`, then `fids`, each sorted) and refers to it by its
/// position in that sequence, so a fleet's state stays small; one topic or group per line keeps it diffable.
/// Version 1 (every membership spelled out) is read and upgraded on the next write.
///
/// The version a state names is itself covered by the checksum (it is among the bytes before it), but a
/// reader that took the version on its word before checking anything let `"version": 4` edited to 2 skip the
/// checksum. So the version is never taken on its word: a checksum is verified whatever version the state
/// names, and a state that names a version older than one of its fields (StateVersionRules) is refused. This
/// is a rule of the reader, not a new format: version-4 files (and older ones) read as before, and a
/// version-4 fcmctl still reads what this one writes.
package enum StateFileFormat {
    package static let currentVersion = 4
    /// Fields a state may have; any other is damage (a renamed `topics` once read as "no topics").
    static let knownFields: Set<String> = [
        "version", "lineage", "serial", "project", "merged_runs", "tokens", "fids", "groups", "topics", "device_names", "applied", "pending",
        "checksum",
    ]
    static let checksumField = ",\n\"checksum\": \"sha256:"

    package struct Decoded: Sendable {
        package var ledger: Ledger
        package var formatVersion: Int
        /// Journal runs already folded into this state: replaying them again must be skipped.
        package var mergedRuns: Set<String>
    }

    package static func encode(_ ledger: Ledger, mergedRuns: Set<String> = []) -> [UInt8] {
        var encoder = StateFileEncoder(ledger)
        return encoder.encode(mergedRuns: mergedRuns)
    }

    static func checksum(_ bytes: ArraySlice<UInt8>) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        for byte in SHA256.hash(data: bytes) {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// The checksum a version-3 state carries must match the bytes before it.
    static func verifyChecksum(_ bytes: [UInt8], source: String) throws {
        let marker = Array(checksumField.utf8)
        var found: Int?
        var index = bytes.count - marker.count
        // The checksum is the last field: search backwards from the end, not through a fleet's state.
        while index >= 0 && bytes.count - index < 200 {
            if bytes[index] == marker[0] && Array(bytes[index..<(index + marker.count)]) == marker {
                found = index
                break
            }
            index -= 1
        }
        guard let found else {
            throw StateError(
                "\(source): the state has no checksum; it was cut short or edited. Restore it from a backup (a GCS state keeps older "
                    + "generations), or check the file and put back the state you mean with `fcmctl state push --force FILE`")
        }
        let start = found + marker.count
        let digits = bytes[start...].prefix { $0 != UInt8(ascii: "\"") }
        let stored = String(decoding: digits, as: UTF8.self)
        guard stored == checksum(bytes[..<found]) else {
            throw StateError(
                "\(source): the state's checksum does not match its content (its version included): it was damaged or edited. Restore "
                    + "it from a backup, or check the file and put back the state you mean with `fcmctl state push --force FILE`")
        }
    }

    static func hex(_ value: UInt64) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }

    static func decodeApplied(_ value: JSONValue?, invalid: (String, String) -> StateError) throws -> AppliedDeclarations {
        var applied = AppliedDeclarations()
        guard let value else { return applied }
        for (name, digest) in value["groups"]?.object ?? [:] {
            guard let text = digest.string, let number = UInt64(text, radix: 16) else {
                throw invalid("applied.groups.\(name)", "is not a fingerprint")
            }
            applied.groups[name] = number
        }
        for item in value["registrations"]?.array ?? [] {
            guard let text = item.string, text.utf8.count == 32, let key = UInt64(text.prefix(16), radix: 16),
                let digest = UInt64(text.suffix(16), radix: 16)
            else { throw invalid("applied.registrations", "holds something that is not a pair of fingerprints") }
            applied.registrations[key] = digest
        }
        return applied
    }

    static func decodeProject(_ value: JSONValue?, invalid: (String, String) -> StateError) throws -> ProjectBinding {
        guard let value else { return ProjectBinding() }
        guard case .object(let fields) = value else { throw invalid("project", "is not an object") }
        if let unknown = fields.keys.filter({ !["id", "sender_id"].contains($0) }).sorted().first {
            throw invalid("project.\(unknown)", "is not a field of a state's project")
        }
        var project = ProjectBinding()
        for (field, keyPath) in [("id", \ProjectBinding.id), ("sender_id", \ProjectBinding.senderId)] {
            guard let part = fields[field] else { continue }
            guard let text = part.string, !text.isEmpty else { throw invalid("project.\(field)", "is not a non-empty string") }
            project[keyPath: keyPath] = text
        }
        guard !project.isEmpty else { throw invalid("project", "names neither an id nor a sender_id") }
        return project
    }

    /// Lineage and serial, read from the head of a state this encoder wrote (without building the whole
    /// ledger a second time beside the one about to be written); any other layout is parsed for those two
    /// fields alone. This is the version a write is conditional on, and `state push --force` must be able to
    /// replace a state that reading refuses (a lowered or removed version, a checksum that does not match).
    package static func version(of bytes: [UInt8], source: String) throws -> StateVersion {
        if let head = headVersion(bytes) { return head }
        if let document = try? JSONParser.parse(bytes), let lineage = document["lineage"]?.string, !lineage.isEmpty,
            let serial = document["serial"]?.int, serial >= 0
        {
            return StateVersion(lineage: lineage, serial: serial)
        }
        let decoded = try decode(bytes, source: source, checkingChecksum: false)
        return StateVersion(lineage: decoded.ledger.lineage, serial: decoded.ledger.serial)
    }

    static func headVersion(_ bytes: [UInt8]) -> StateVersion? {
        var index = 0
        func expect(_ text: StaticString) -> Bool {
            let count = text.utf8CodeUnitCount
            guard index + count <= bytes.count else { return false }
            for offset in 0..<count where bytes[index + offset] != text.utf8Start[offset] { return false }
            index += count
            return true
        }
        func digits() -> Int? {
            var value = 0
            let first = index
            while index < bytes.count, index - first < 18, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) {
                value = value * 10 + Int(bytes[index] - UInt8(ascii: "0"))
                index += 1
            }
            return index > first ? value : nil
        }
        guard expect("{\n\"version\": "), let version = digits(), version == currentVersion || version == ShardIndex.version,
            expect(",\n\"lineage\": \"")
        else { return nil }
        let lineageStart = index
        // Lineages are hex: anything needing an escape is left to the full decoder.
        while index < bytes.count, bytes[index] != UInt8(ascii: "\""), bytes[index] != UInt8(ascii: "\\"), index - lineageStart < 256 { index += 1 }
        guard index < bytes.count, bytes[index] == UInt8(ascii: "\""), index > lineageStart else { return nil }
        let lineage = String(decoding: bytes[lineageStart..<index], as: UTF8.self)
        index += 1
        guard expect(",\n\"serial\": "), let serial = digits(), index < bytes.count,
            bytes[index] == UInt8(ascii: ",") || bytes[index] == UInt8(ascii: "\n")
        else { return nil }
        return StateVersion(lineage: lineage, serial: serial)
    }

    /// `source` names the file in errors.
    /// `checkingChecksum: false` is for `state push`: a file a person pulled and edited is pushed on purpose,
    /// checked by its fields, lineage and serial rather than by a checksum its edit invalidated.
    package static func decode(_ bytes: some Collection<UInt8>, source: String, checkingChecksum: Bool = true) throws -> Decoded {
        let document: JSONValue
        do {
            document = try JSONParser.parse(bytes)
        } catch let error as JSONParseError {
            throw StateError("\(source): the state is not valid JSON (\(error)); restore it from a backup, or move it aside to start afresh")
        }
        func invalid(_ field: String, _ problem: String) -> StateError {
            StateError("\(source): the state is not valid fcmctl state: field '\(field)' \(problem); restore it from a backup")
        }
        guard case .object(let fields) = document else { throw StateError("\(source): the state is not a JSON object; restore it from a backup") }
        guard let named = document["version"]?.int else {
            throw StateVersionRules.refusal(
                source, "field 'version' is missing or not a number: without it nothing says which checks its content must pass")
        }
        guard named >= 1 else {
            throw StateVersionRules.refusal(source, "field 'version' is \(named), not a state format version (1 to \(currentVersion))")
        }
        if named == ShardIndex.version && fields["shards"] != nil {
            throw StateError(
                "\(source): this is the index of a sharded state (it names the objects holding the records, not the records): "
                    + "`fcmctl state pull` prints the whole state as one document, which `fcmctl state push` takes")
        }
        guard named <= currentVersion else {
            throw StateError("\(source): state format version \(named) is newer than this fcmctl understands (\(currentVersion)); upgrade fcmctl")
        }
        if let unknown = fields.keys.filter({ !knownFields.contains($0) }).sorted().first {
            throw invalid(unknown, "is not a field of a state")
        }
        var version = named
        if let newer = StateVersionRules.newestField(of: document), newer.version > named {
            // A pushed file is one a person checked: it is read as the version its fields show.
            guard !checkingChecksum else { throw StateVersionRules.lowered(source, named: named, field: newer.field, since: newer.version) }
            version = newer.version
        }
        if checkingChecksum && (version >= 3 || fields["checksum"] != nil) { try verifyChecksum(Array(bytes), source: source) }
        guard let lineage = document["lineage"]?.string, !lineage.isEmpty else { throw invalid("lineage", "is missing") }
        guard let serial = document["serial"]?.int, serial >= 0 else { throw invalid("serial", "is missing or negative") }
        for required in ["groups", "topics"] where version >= 2 {
            guard document[required]?.object != nil else { throw invalid(required, "is missing or not an object") }
        }
        var ledger = Ledger(lineage: lineage, serial: serial)
        let merged = Set(document["merged_runs"]?.array?.compactMap(\.string) ?? [])
        switch version {
        case 1: try decodeVersion1(document, into: &ledger, invalid: invalid)
        default: try decodeVersion2(document, into: &ledger, invalid: invalid)
        }
        ledger.applied = try decodeApplied(document["applied"], invalid: invalid)
        ledger.project = try decodeProject(document["project"], invalid: invalid)
        return Decoded(ledger: ledger, formatVersion: version, mergedRuns: merged)
    }

    private static func decodeVersion2(
        _ document: JSONValue, into ledger: inout Ledger, invalid: (String, String) -> StateError
    ) throws {
        var registrations: [Registration] = []
        for (field, kind) in [("tokens", Registration.Kind.token), ("fids", .fid)] {
            guard let values = (document[field] ?? .array([])).array else { throw invalid(field, "is not a list") }
            var seen = Set<String>()
            for value in values {
                guard let text = value.string, !text.isEmpty else { throw invalid(field, "holds something that is not a registration") }
                guard seen.insert(text).inserted else { throw invalid(field, "lists a registration twice") }
                registrations.append(Registration(value: text, kind: kind))
            }
        }
        func members(_ value: JSONValue?, _ field: String) throws -> Set<Registration> {
            guard let references = value?.array else { throw invalid(field, "is not a list of registration positions") }
            var set = Set<Registration>(minimumCapacity: references.count)
            for reference in references {
                guard let position = reference.int, registrations.indices.contains(position) else {
                    throw invalid(field, "refers to a registration that is not in 'tokens' or 'fids'")
                }
                set.insert(registrations[position])
            }
            return set
        }
        for (name, value) in document["groups"]?.object ?? [:] {
            guard value.object != nil else { throw invalid("groups.\(name)", "is not an object") }
            if let protect = value["protect"], protect.bool == nil { throw invalid("groups.\(name).protect", "is not true or false") }
            let group = LedgerGroup(
                members: try members(value["members"], "groups.\(name).members"), protect: value["protect"]?.bool ?? false)
            ledger.groups[name] = group
        }
        for (name, value) in document["topics"]?.object ?? [:] {
            let set = try members(value, "topics.\(name)")
            if !set.isEmpty { ledger.topics[name] = set }
        }
        if let names = document["device_names"], names.object == nil { throw invalid("device_names", "is not an object") }
        for (reference, value) in document["device_names"]?.object ?? [:] {
            guard let position = Int(reference), registrations.indices.contains(position), let name = value.string, !name.isEmpty else {
                throw invalid("device_names.\(reference)", "is not a registration position with a device name")
            }
            ledger.deviceNames[registrations[position]] = name
        }
        if let pending = document["pending"] {
            guard pending.object != nil else { throw invalid("pending", "is not an object") }
            let groups = pending["groups"] ?? .array([])
            guard let names = groups.array, names.allSatisfy({ $0.string?.isEmpty == false }) else {
                throw invalid("pending.groups", "is not a list of group names")
            }
            ledger.pending.groups = Set(names.compactMap(\.string))
            if let subscriptions = pending["subscriptions"], subscriptions.object == nil {
                throw invalid("pending.subscriptions", "is not an object")
            }
            for (name, value) in pending["subscriptions"]?.object ?? [:] {
                let set = try members(value, "pending.subscriptions.\(name)")
                if !set.isEmpty { ledger.pending.subscriptions[name] = set }
            }
            if let groupMembers = pending["group_members"], groupMembers.object == nil {
                throw invalid("pending.group_members", "is not an object")
            }
            for (name, value) in pending["group_members"]?.object ?? [:] {
                guard ledger.pending.groups.contains(name) else {
                    throw invalid("pending.group_members.\(name)", "names a group that is not pending")
                }
                ledger.pending.groupMembers[name] = try members(value, "pending.group_members.\(name)")
            }
        }
    }

    /// Version 1: `{"token": …}` or `{"fid": …}` objects spelled out in every membership.
    private static func decodeVersion1(
        _ document: JSONValue, into ledger: inout Ledger, invalid: (String, String) -> StateError
    ) throws {
        func registration(_ value: JSONValue, _ field: String) throws -> Registration {
            if let fid = value["fid"]?.string { return Registration(value: fid, kind: .fid) }
            if let token = value["token"]?.string { return Registration(value: token, kind: .token) }
            throw invalid(field, "holds something that is not a registration")
        }
        for (name, value) in document["groups"]?.object ?? [:] {
            guard let list = value["members"]?.array else { throw invalid("groups.\(name).members", "is missing") }
            ledger.groups[name] = LedgerGroup(
                members: Set(try list.map { try registration($0, "groups.\(name).members") }), protect: value["protect"]?.bool ?? false)
        }
        for (name, value) in document["topics"]?.object ?? [:] {
            guard let list = value.array else { throw invalid("topics.\(name)", "is not a list") }
            let set = Set(try list.map { try registration($0, "topics.\(name)") })
            if !set.isEmpty { ledger.topics[name] = set }
        }
    }
}
