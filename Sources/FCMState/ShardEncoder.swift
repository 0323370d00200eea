import FCMCore

/// Writes one shard of a sharded state (format version 5): the records StateShards.split put in it, with topic
/// and group names replaced by their numbers in the index (ShardNames). One line per registration holds
/// everything about it:
///
///     {
///     "lineage": "7e23…",
///     "tokens": [
///     ["fGw0…:APA91b…",[1230,1,1,2],[17],"kiosk-nyc-001","B3x9Qm0aZ_k"],
///     …
///     ],
///     "fids": [],
///     "groups": [17],
///     "protected": [17],
///     "applied_groups": {"17": "A0Zx93kq_3m"},
///     "applied": ["…22 characters…"],
///     "pending": {"groups": [4], "group_members": {"4": [0]}, "subscriptions": {"2": [0]}}
///     }
///
/// A registration's line: its value; its topics' numbers, ascending, each after the first written as its
/// difference from the one before (a device's topics are often numbered close together); its groups' numbers
/// likewise; its device name or null; the fingerprint of what the last apply declared for it (whose key, the
/// hash of its value, is not written: the reader computes it) or null. `groups` lists the groups whose record is
/// in this shard but none of whose members is (a group with one is on that member's line), `protected` those
/// of this shard's groups that are protected, `applied_groups` the fingerprints of groups homed here, `applied` the fingerprints (key and value) of registrations with no line here, and `pending`
/// refers to registrations by their position among `tokens`, then `fids`. A fingerprint is its 64 bits in 11
/// base64url characters, the first carrying the top four. Only the shard's optional sections are left out when
/// empty; nothing is written twice. The shard has no checksum of its own: the index holds its SHA-256.
package struct ShardEncoder {
    private let part: Ledger
    private let numbers: ShardNames.Numbers
    private var out: JSONWriter

    init(_ part: Ledger, numbers: ShardNames.Numbers) {
        self.part = part
        self.numbers = numbers
        out = JSONWriter()
    }

    package static func encode(_ part: Ledger, numbers: ShardNames.Numbers) -> [UInt8] {
        var encoder = ShardEncoder(part, numbers: numbers)
        return encoder.encode()
    }

    mutating func encode() -> [UInt8] {
        var topicsOf: [Registration: [Int]] = [:]
        for (name, members) in part.topics {
            let number = numbers.topics[name]!
            for member in members { topicsOf[member, default: []].append(number) }
        }
        var groupsOf: [Registration: [Int]] = [:]
        for (name, group) in part.groups {
            let number = numbers.groups[name]!
            for member in group.members { groupsOf[member, default: []].append(number) }
        }
        var everyone = Set(topicsOf.keys).union(groupsOf.keys)
        for members in part.pending.subscriptions.values { everyone.formUnion(members) }
        for members in part.pending.groupMembers.values { everyone.formUnion(members) }
        let tokens = everyone.filter { $0.kind == .token }.sorted()
        let fids = everyone.filter { $0.kind == .fid }.sorted()
        var position: [Registration: Int] = [:]
        position.reserveCapacity(everyone.count)
        for (index, registration) in (tokens + fids).enumerated() { position[registration] = index }
        let memberships = topicsOf.values.reduce(0) { $0 + $1.count }
        out = JSONWriter(capacity: everyone.count * 200 + memberships * 3 + 1024)

        out.raw("{\n\"lineage\": ")
        out.string(part.lineage)
        var attached = Set<UInt64>()
        for (field, list) in [(StaticString("tokens"), tokens), ("fids", fids)] {
            out.raw(",\n\"")
            out.raw(field)
            out.raw("\": [")
            for (index, registration) in list.enumerated() {
                out.raw(index == 0 ? "\n[" : ",\n[")
                registration.withUTF8 { out.string(utf8: $0) }
                out.raw(",")
                deltas(topicsOf[registration] ?? [])
                out.raw(",")
                deltas(groupsOf[registration] ?? [])
                out.raw(",")
                if let name = part.deviceNames[registration] { out.string(name) } else { out.raw("null") }
                out.raw(",")
                // Two registrations whose keys collide share one fingerprint: the first line carries it.
                let key = AppliedDeclarations.fnv(registration)
                if let digest = part.applied.registrations[key], attached.insert(key).inserted {
                    fingerprint(digest)
                } else {
                    out.raw("null")
                }
                out.raw("]")
            }
            out.raw(list.isEmpty ? "]" : "\n]")
        }
        // A group with a member here is on that member's line: only groups without one need naming.
        let recorded = part.groups.filter(\.value.members.isEmpty).keys.map { numbers.groups[$0]! }.sorted()
        out.raw(",\n\"groups\": ")
        plain(recorded)
        let protected = part.groups.filter(\.value.protect).keys.map { numbers.groups[$0]! }.sorted()
        if !protected.isEmpty {
            out.raw(",\n\"protected\": ")
            plain(protected)
        }
        if !part.applied.groups.isEmpty {
            out.raw(",\n\"applied_groups\": {")
            for (index, (number, digest)) in part.applied.groups.map({ (numbers.groups[$0.key]!, $0.value) }).sorted(by: { $0.0 < $1.0 })
                .enumerated()
            {
                if index > 0 { out.raw(", ") }
                out.string(String(number))
                out.raw(": ")
                fingerprint(digest)
            }
            out.raw("}")
        }
        let loose = part.applied.registrations.keys.filter { !attached.contains($0) }.sorted()
        if !loose.isEmpty {
            out.raw(",\n\"applied\": [")
            for (index, key) in loose.enumerated() {
                out.raw(index == 0 ? "\n" : ",\n")
                out.string(Self.fingerprint(key) + Self.fingerprint(part.applied.registrations[key]!))
            }
            out.raw("\n]")
        }
        pending(position)
        out.raw("\n}\n")
        return out.bytes
    }

    private mutating func pending(_ position: [Registration: Int]) {
        let pending = part.pending
        guard !pending.groups.isEmpty || !pending.subscriptions.isEmpty || !pending.groupMembers.isEmpty else { return }
        out.raw(",\n\"pending\": {\"groups\": ")
        plain(pending.groups.map { numbers.groups[$0]! }.sorted())
        out.raw(", \"group_members\": ")
        positions(pending.groupMembers, numbers.groups, position)
        out.raw(", \"subscriptions\": ")
        positions(pending.subscriptions, numbers.topics, position)
        out.raw("}")
    }

    private mutating func positions(_ map: [String: Set<Registration>], _ numbered: [String: Int], _ position: [Registration: Int]) {
        out.raw("{")
        for (index, (number, members)) in map.map({ (numbered[$0.key]!, $0.value) }).sorted(by: { $0.0 < $1.0 }).enumerated() {
            if index > 0 { out.raw(", ") }
            out.string(String(number))
            out.raw(": ")
            plain(members.map { position[$0]! }.sorted())
        }
        out.raw("}")
    }

    private mutating func plain(_ values: [Int]) {
        out.raw("[")
        for (index, value) in values.enumerated() {
            if index > 0 { out.raw(",") }
            out.int(value)
        }
        out.raw("]")
    }

    private mutating func deltas(_ values: [Int]) {
        out.raw("[")
        var previous = 0
        for (index, value) in values.sorted().enumerated() {
            if index > 0 { out.raw(",") }
            out.int(value - previous)
            previous = value
        }
        out.raw("]")
    }

    private mutating func fingerprint(_ value: UInt64) {
        out.raw("\"")
        out.bytes.append(contentsOf: Self.fingerprint(value).utf8)
        out.raw("\"")
    }

    static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// 11 base64url characters, most significant first: the first holds 4 bits, each other 6.
    package static func fingerprint(_ value: UInt64) -> String {
        var text: [UInt8] = [alphabet[Int(value >> 60)]]
        for shift in stride(from: 54, through: 0, by: -6) { text.append(alphabet[Int((value >> UInt64(shift)) & 0x3F)]) }
        return String(decoding: text, as: UTF8.self)
    }

    /// The value of an 11-character fingerprint; nil for any other text, so each value has one spelling.
    package static func fingerprintValue<Text: Collection<UInt8>>(_ text: Text) -> UInt64? {
        guard text.count == 11 else { return nil }
        var value: UInt64 = 0
        for (index, byte) in text.enumerated() {
            guard let digit = Self.digit(byte), index > 0 || digit < 16 else { return nil }
            value = value << 6 | UInt64(digit)
        }
        return value
    }

    private static func digit(_ byte: UInt8) -> Int? {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): Int(byte - UInt8(ascii: "A"))
        case UInt8(ascii: "a")...UInt8(ascii: "z"): Int(byte - UInt8(ascii: "a")) + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): Int(byte - UInt8(ascii: "0")) + 52
        case UInt8(ascii: "-"): 62
        case UInt8(ascii: "_"): 63
        default: nil
        }
    }
}
