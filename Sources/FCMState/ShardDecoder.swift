import FCMCore

/// Reads one shard that ShardEncoder wrote back into the records it holds, names taken from the index's tables.
/// Nothing is guessed: an unknown field, a number no name has, a topic listed twice on a line, a registration
/// listed twice, a fingerprint given twice, each is an error naming the shard and the field. The SHA-256 the
/// index holds has already checked every byte; these checks keep an index and shards edited together (and
/// their digests recomputed) from being read as records they do not spell.
package enum ShardDecoder {
    static let knownFields: Set<String> = [
        "lineage", "tokens", "fids", "groups", "protected", "applied_groups", "applied", "pending",
    ]

    package static func decode(_ bytes: [UInt8], names: ShardNames, lineage: String, source: String) throws -> Ledger {
        func invalid(_ field: String, _ problem: String) -> StateError {
            StateError("\(source): this shard of the state is not valid: field '\(field)' \(problem). \(StateVersionRules.wayOut)")
        }
        let document: JSONValue
        do {
            document = try JSONParser.parse(bytes)
        } catch {
            throw StateError("\(source): this shard of the state is not valid JSON (\(error)). \(StateVersionRules.wayOut)")
        }
        guard case .object(let fields) = document else { throw invalid("(the shard)", "is not a JSON object") }
        if let unknown = fields.keys.filter({ !knownFields.contains($0) }).sorted().first {
            throw invalid(unknown, "is not a field of a shard")
        }
        guard document["lineage"]?.string == lineage else { throw invalid("lineage", "is not the lineage of its index") }
        var part = Ledger(lineage: lineage, serial: 0)

        func topic(_ number: Int, _ field: String) throws -> String {
            guard names.topics.indices.contains(number), let name = names.topics[number] else {
                throw invalid(field, "refers to topic number \(number), which the index does not name")
            }
            return name
        }
        func group(_ number: Int, _ field: String) throws -> String {
            guard names.groups.indices.contains(number), let name = names.groups[number] else {
                throw invalid(field, "refers to group number \(number), which the index does not name")
            }
            return name
        }
        /// Ascending numbers: the first as it is, each other as its difference from the one before (at least 1).
        func deltas(_ value: JSONValue, _ field: String) throws -> [Int] {
            guard let list = value.array else { throw invalid(field, "is not a list of numbers") }
            var numbers: [Int] = []
            numbers.reserveCapacity(list.count)
            var previous = 0
            for (index, item) in list.enumerated() {
                guard let step = item.int, index == 0 ? step >= 0 : step >= 1 else {
                    throw invalid(field, "is not a list of ascending numbers written as differences")
                }
                let (next, overflow) = previous.addingReportingOverflow(step)
                guard !overflow else { throw invalid(field, "holds a number out of range") }
                previous = next
                numbers.append(next)
            }
            return numbers
        }
        func plain(_ value: JSONValue?, _ field: String) throws -> [Int] {
            guard let list = value?.array else { throw invalid(field, "is missing or not a list of numbers") }
            var numbers: [Int] = []
            for item in list {
                guard let number = item.int, number > (numbers.last ?? -1) else { throw invalid(field, "is not a list of ascending numbers") }
                numbers.append(number)
            }
            return numbers
        }

        var registrations: [Registration] = []
        var attachedKeys = Set<UInt64>()
        for (field, kind) in [("tokens", Registration.Kind.token), ("fids", .fid)] {
            guard let lines = document[field]?.array else { throw invalid(field, "is missing or not a list") }
            var seen = Set<Registration>()
            for (index, line) in lines.enumerated() {
                let at = "\(field)[\(index)]"
                guard let items = line.array, items.count == 5, let value = items[0].string, !value.isEmpty else {
                    throw invalid(at, "is not [registration, topics, groups, device name, fingerprint]")
                }
                let registration = Registration(value: value, kind: kind)
                guard seen.insert(registration).inserted else { throw invalid(at, "lists a registration a second time") }
                registrations.append(registration)
                for number in try deltas(items[1], at + " topics") {
                    part.topics[try topic(number, at + " topics"), default: []].insert(registration)
                }
                for number in try deltas(items[2], at + " groups") {
                    part.groups[try group(number, at + " groups"), default: LedgerGroup(members: [])].members.insert(registration)
                }
                switch items[3] {
                case .null: break
                case .string(let name) where !name.isEmpty: part.deviceNames[registration] = name
                default: throw invalid(at + " device name", "is neither a name nor null")
                }
                switch items[4] {
                case .null: break
                case .string(let text):
                    guard let digest = ShardEncoder.fingerprintValue(text.utf8) else { throw invalid(at + " fingerprint", "is not a fingerprint") }
                    let key = AppliedDeclarations.fnv(registration)
                    guard attachedKeys.insert(key).inserted else { throw invalid(at + " fingerprint", "is a second one for its key") }
                    part.applied.registrations[key] = digest
                default: throw invalid(at + " fingerprint", "is neither a fingerprint nor null")
                }
            }
        }

        for number in try plain(document["groups"], "groups") {
            let name = try group(number, "groups")
            guard part.groups[name] == nil else { throw invalid("groups", "names group \(name), which has a member on a line of this shard") }
            part.groups[name] = LedgerGroup(members: [])
        }
        if let protected = document["protected"] {
            for number in try plain(protected, "protected") {
                let name = try group(number, "protected")
                guard part.groups[name] != nil else { throw invalid("protected", "names a group that is not in this shard") }
                part.groups[name]?.protect = true
            }
        }
        if let applied = document["applied_groups"] {
            guard let map = applied.object else { throw invalid("applied_groups", "is not an object") }
            for (key, value) in map {
                guard let number = Int(key), String(number) == key, let text = value.string, let digest = ShardEncoder.fingerprintValue(text.utf8)
                else {
                    throw invalid("applied_groups.\(key)", "is not a group number with a fingerprint")
                }
                part.applied.groups[try group(number, "applied_groups.\(key)")] = digest
            }
        }
        if let loose = document["applied"] {
            guard let list = loose.array else { throw invalid("applied", "is not a list") }
            for item in list {
                guard let text = item.string, text.utf8.count == 22, let key = ShardEncoder.fingerprintValue(text.utf8.prefix(11)),
                    let digest = ShardEncoder.fingerprintValue(text.utf8.suffix(11))
                else { throw invalid("applied", "holds something that is not a key and a fingerprint") }
                guard attachedKeys.insert(key).inserted else { throw invalid("applied", "gives a key a second fingerprint") }
                part.applied.registrations[key] = digest
            }
        }
        if let pending = document["pending"] {
            try decodePending(pending, registrations: registrations, into: &part, topic: topic, group: group, plain: plain, invalid: invalid)
        }
        return part
    }

    private static func decodePending(
        _ pending: JSONValue, registrations: [Registration], into part: inout Ledger, topic: (Int, String) throws -> String,
        group: (Int, String) throws -> String, plain: (JSONValue?, String) throws -> [Int], invalid: (String, String) -> StateError
    ) throws {
        guard case .object(let fields) = pending else { throw invalid("pending", "is not an object") }
        if let unknown = fields.keys.filter({ !["groups", "group_members", "subscriptions"].contains($0) }).sorted().first {
            throw invalid("pending.\(unknown)", "is not a field of a shard's pending changes")
        }
        for number in try plain(pending["groups"], "pending.groups") { part.pending.groups.insert(try group(number, "pending.groups")) }
        func members(_ value: JSONValue, _ field: String) throws -> Set<Registration> {
            Set(
                try plain(value, field).map { position in
                    guard registrations.indices.contains(position) else { throw invalid(field, "refers to a registration not in this shard") }
                    return registrations[position]
                })
        }
        for (field, isGroup) in [("group_members", true), ("subscriptions", false)] {
            guard let map = pending[field]?.object else { throw invalid("pending.\(field)", "is missing or not an object") }
            for (key, value) in map {
                let at = "pending.\(field).\(key)"
                guard let number = Int(key), String(number) == key else { throw invalid(at, "is not a number") }
                let set = try members(value, at)
                if isGroup {
                    let name = try group(number, at)
                    guard part.pending.groups.contains(name) else { throw invalid(at, "names a group that is not pending") }
                    part.pending.groupMembers[name] = set
                } else {
                    guard !set.isEmpty else { throw invalid(at, "is empty") }
                    part.pending.subscriptions[try topic(number, at)] = set
                }
            }
        }
    }
}
