import FCMCore

/// Writes a ledger as the state document of `StateFileFormat.currentVersion`, section by section, in one
/// buffer sized for the fleet: every registration once (`tokens`, then `fids`, sorted), every membership a
/// position in that sequence, one topic or group per line so a state stays diffable, and the checksum of
/// everything before it last.
struct StateFileEncoder {
    private let ledger: Ledger
    private let tokens: [Registration]
    private let fids: [Registration]
    private var position: [Registration: Int] = [:]
    private var out: JSONWriter

    init(_ ledger: Ledger) {
        self.ledger = ledger
        var everyone = Set<Registration>()
        for members in ledger.topics.values { everyone.formUnion(members) }
        for group in ledger.groups.values { everyone.formUnion(group.members) }
        for members in ledger.pending.subscriptions.values { everyone.formUnion(members) }
        for members in ledger.pending.groupMembers.values { everyone.formUnion(members) }
        // Sorted by their bytes (`Registration.sorted`), as ShardEncoder does: the same order as the texts' for
        // the ASCII every valid registration is, without making a String of each.
        tokens = everyone.filter { $0.kind == .token }.sorted()
        fids = everyone.filter { $0.kind == .fid }.sorted()
        position.reserveCapacity(everyone.count)
        for (index, registration) in tokens.enumerated() { position[registration] = index }
        for (index, registration) in fids.enumerated() { position[registration] = tokens.count + index }
        let memberships = ledger.topics.values.reduce(0) { $0 + $1.count }
        out = JSONWriter(capacity: (tokens.count + fids.count) * 170 + memberships * 8 + 4096)
    }

    mutating func encode(mergedRuns: Set<String>) -> [UInt8] {
        header(mergedRuns: mergedRuns)
        out.raw(",\n\"tokens\": ")
        list(tokens)
        out.raw(",\n\"fids\": ")
        list(fids)
        groups()
        out.raw(",\n\"topics\": ")
        topicMap(ledger.topics, indent: "  ", closing: "\n}")
        deviceNames()
        applied()
        pending()
        return Self.sealed(out)
    }

    private mutating func header(mergedRuns: Set<String>) {
        Self.header(
            &out, version: StateFileFormat.currentVersion, lineage: ledger.lineage, serial: ledger.serial, project: ledger.project,
            mergedRuns: mergedRuns)
    }

    /// The head a state document and a shard index share: version, lineage, serial, project, merged runs.
    static func header(
        _ out: inout JSONWriter, version: Int, lineage: String, serial: Int, project: ProjectBinding, mergedRuns: Set<String>
    ) {
        out.raw("{\n\"version\": ")
        out.int(version)
        out.raw(",\n\"lineage\": ")
        out.string(lineage)
        out.raw(",\n\"serial\": ")
        out.int(serial)
        if !project.isEmpty {
            // Known parts only: an empty id is "unknown", not a project called "".
            out.raw(",\n\"project\": {")
            if !project.id.isEmpty {
                out.raw("\"id\": ")
                out.string(project.id)
            }
            if !project.senderId.isEmpty {
                if !project.id.isEmpty { out.raw(", ") }
                out.raw("\"sender_id\": ")
                out.string(project.senderId)
            }
            out.raw("}")
        }
        if !mergedRuns.isEmpty {
            out.raw(",\n\"merged_runs\": [")
            for (index, run) in mergedRuns.sorted().enumerated() {
                if index > 0 { out.raw(", ") }
                out.string(run)
            }
            out.raw("]")
        }
    }

    /// The document's bytes with its checksum, of everything before it, as the last field.
    static func sealed(_ out: JSONWriter) -> [UInt8] {
        var bytes = out.bytes
        let digest = StateFileFormat.checksum(bytes[...])
        bytes.append(contentsOf: Array(StateFileFormat.checksumField.utf8))
        bytes.append(contentsOf: Array(digest.utf8))
        bytes.append(contentsOf: Array("\"\n}\n".utf8))
        return bytes
    }

    private mutating func groups() {
        out.raw(",\n\"groups\": {")
        for (index, name) in ledger.groups.keys.sorted().enumerated() {
            let group = ledger.groups[name]!
            out.raw(index == 0 ? "\n  " : ",\n  ")
            out.string(name)
            out.raw(": {\"members\": ")
            references(group.members)
            if group.protect { out.raw(", \"protect\": true") }
            out.raw("}")
        }
        out.raw(ledger.groups.isEmpty ? "}" : "\n}")
    }

    /// Names only of registrations the state records: a rotated-away token's name leaves with its records.
    private mutating func deviceNames() {
        let named = ledger.deviceNames.compactMap { entry in position[entry.key].map { ($0, entry.value) } }.sorted { $0.0 < $1.0 }
        guard !named.isEmpty else { return }
        out.raw(",\n\"device_names\": {")
        for (index, (reference, name)) in named.enumerated() {
            out.raw(index == 0 ? "\n  \"" : ",\n  \"")
            out.int(reference)
            out.raw("\": ")
            out.string(name)
        }
        out.raw("\n}")
    }

    /// Fingerprints of what the last successful apply declared: 32 hex digits per registration.
    private mutating func applied() {
        guard !ledger.applied.isEmpty else { return }
        out.raw(",\n\"applied\": {\"groups\": {")
        for (index, name) in ledger.applied.groups.keys.sorted().enumerated() {
            if index > 0 { out.raw(", ") }
            out.string(name)
            out.raw(": ")
            out.string(StateFileFormat.hex(ledger.applied.groups[name]!))
        }
        out.raw("},\n  \"registrations\": [")
        for (index, key) in ledger.applied.registrations.keys.sorted().enumerated() {
            out.raw(index % 8 == 0 ? (index == 0 ? "\n    \"" : ",\n    \"") : ", \"")
            hex(key)
            hex(ledger.applied.registrations[key]!)
            out.raw("\"")
        }
        out.raw("\n  ]}")
    }

    private mutating func pending() {
        guard !ledger.pending.isEmpty else { return }
        out.raw(",\n\"pending\": {\n  \"groups\": [")
        for (index, name) in ledger.pending.groups.sorted().enumerated() {
            if index > 0 { out.raw(", ") }
            out.string(name)
        }
        out.raw("],\n  \"subscriptions\": ")
        topicMap(ledger.pending.subscriptions, indent: "    ", closing: "\n  }")
        if !ledger.pending.groupMembers.isEmpty {
            out.raw(",\n  \"group_members\": ")
            topicMap(ledger.pending.groupMembers, indent: "    ", closing: "\n  }")
        }
        out.raw("\n}")
    }

    /// 16 lowercase hex digits, as `StateFileFormat.hex` spells them, written in place.
    private mutating func hex(_ value: UInt64) {
        for shift in stride(from: 60, through: 0, by: -4) {
            let digit = UInt8((value >> UInt64(shift)) & 0xF)
            out.bytes.append(digit < 10 ? UInt8(ascii: "0") + digit : UInt8(ascii: "a") + digit - 10)
        }
    }

    private mutating func list(_ values: [Registration]) {
        out.raw("[")
        for (index, value) in values.enumerated() {
            out.raw(index == 0 ? "\n  " : ",\n  ")
            value.withUTF8 { out.string(utf8: $0) }
        }
        out.raw(values.isEmpty ? "]" : "\n]")
    }

    private mutating func references(_ members: Set<Registration>) {
        out.raw("[")
        for (index, reference) in members.map({ position[$0]! }).sorted().enumerated() {
            if index > 0 { out.raw(",") }
            out.int(reference)
        }
        out.raw("]")
    }

    private mutating func topicMap(_ topics: [String: Set<Registration>], indent: StaticString, closing: StaticString) {
        out.raw("{")
        for (index, name) in topics.keys.sorted().enumerated() {
            out.raw(index == 0 ? "\n" : ",\n")
            out.raw(indent)
            out.string(name)
            out.raw(": ")
            references(topics[name]!)
        }
        out.raw(topics.isEmpty ? "}" : closing)
    }
}
