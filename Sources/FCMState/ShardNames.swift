import FCMCore

/// The topic and group names of a sharded state, numbered once in its index (`topic_names`, `group_names`) and
/// referred to by number in its shards. Every shard of a fleet names most of its topics: spelled out, 2,000
/// topic names were written again in each of 128 shards.
///
/// A number keeps its name from one write to the next: a name no record uses any longer leaves a hole (`null`),
/// a new name takes the lowest hole or the next number, so adding a topic or group rewrites the index and the
/// shards that hold it, not every shard. A hole may be given to another name by a later write: a shard is only
/// ever read with the names of the index that names it, and every write encodes every shard anew with its own
/// numbers, so a shard object an old and a new index both name reads under each as that index's ledger. Holes
/// are closed up, renumbering every name, once they outnumber the names in use.
package struct ShardNames: Sendable, Equatable {
    package var topics: [String?] = []
    package var groups: [String?] = []

    package init(topics: [String?] = [], groups: [String?] = []) {
        self.topics = topics
        self.groups = groups
    }

    /// Numbers for `ledger`'s names, keeping those `previous` gave.
    /// `keepingAll`: every name `previous` numbers stays, used or not (a write of some shards: the others still
    /// refer to them by number).
    package static func numbering(for ledger: Ledger, keeping previous: ShardNames?, keepingAll: Bool = false) -> ShardNames {
        var topicNames = Set(ledger.topics.keys)
        topicNames.formUnion(ledger.pending.subscriptions.keys)
        var groupNames = Set(ledger.groups.keys)
        groupNames.formUnion(ledger.pending.groups)
        groupNames.formUnion(ledger.pending.groupMembers.keys)
        groupNames.formUnion(ledger.applied.groups.keys)
        if keepingAll, let previous {
            for case let name? in previous.topics { topicNames.insert(name) }
            for case let name? in previous.groups { groupNames.insert(name) }
        }
        return ShardNames(
            topics: table(topicNames, keeping: previous?.topics ?? [], renumbering: !keepingAll),
            groups: table(groupNames, keeping: previous?.groups ?? [], renumbering: !keepingAll))
    }

    static func table(_ names: Set<String>, keeping previous: [String?], renumbering: Bool = true) -> [String?] {
        var table = previous.map { name in name.flatMap { names.contains($0) ? $0 : nil } }
        var placed = Set<String>()
        for case let name? in table { placed.insert(name) }
        let fresh = names.subtracting(placed).sorted()
        let holesLeft = max(0, table.count - placed.count - fresh.count)
        // A state that shed most of its names is renumbered once (every shard rewritten) rather than carry them.
        if renumbering, holesLeft > names.count { return names.sorted() }
        var next = fresh.makeIterator()
        for number in table.indices where table[number] == nil {
            guard let name = next.next() else { break }
            table[number] = name
        }
        while let name = next.next() { table.append(name) }
        while let last = table.last, last == nil { table.removeLast() }
        return table
    }

    /// Name → number, for an encoder.
    package struct Numbers {
        var topics: [String: Int]
        var groups: [String: Int]
    }

    package var numbers: Numbers {
        func lookup(_ table: [String?]) -> [String: Int] {
            var numbers = [String: Int](minimumCapacity: table.count)
            for (number, name) in table.enumerated() { if let name { numbers[name] = number } }
            return numbers
        }
        return Numbers(topics: lookup(topics), groups: lookup(groups))
    }

    /// A table as an index holds it: names, no name twice, `null` for a hole.
    static func decodeTable(_ value: JSONValue?, field: String, invalid: (String, String) -> StateError) throws -> [String?] {
        guard let list = value?.array else { throw invalid(field, "is missing or not a list") }
        var table: [String?] = []
        table.reserveCapacity(list.count)
        var seen = Set<String>()
        for (number, item) in list.enumerated() {
            if case .null = item {
                table.append(nil)
                continue
            }
            guard let name = item.string, !name.isEmpty else { throw invalid("\(field)[\(number)]", "is neither a name nor null") }
            guard seen.insert(name).inserted else { throw invalid("\(field)[\(number)]", "names \(name) a second time") }
            table.append(name)
        }
        if let last = list.last, case .null = last { throw invalid(field, "ends in a hole") }
        return table
    }

    static func encodeTable(_ table: [String?], into out: inout JSONWriter) {
        out.raw("[")
        for (number, name) in table.enumerated() {
            out.raw(number == 0 ? "\n  " : ",\n  ")
            if let name { out.string(name) } else { out.raw("null") }
        }
        out.raw(table.isEmpty ? "]" : "\n]")
    }
}
