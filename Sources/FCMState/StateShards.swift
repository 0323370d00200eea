import FCMCore
import Foundation

/// How a ledger is cut into shards and put back together. Everything about one registration (its topic
/// subscriptions, pending subscriptions, applied declaration, device name) lands in the shard its value hashes
/// to, and everything about one group (members, protection, pending state, applied fingerprint) in the shard its
/// name hashes to, so a change to k registrations and groups touches at most k shards. The hash is FNV-1a
/// (`AppliedDeclarations.fnv`, the key `applied.registrations` already uses) finished with splitmix64, never
/// Swift's per-process seeded `Hasher`: the same ledger must cut the same way in every run.
package enum StateShards {
    /// The shard of a hash among `1 << bits`: its top bits, so doubling the count splits each shard in two.
    static func shard(of hash: UInt64, bits: Int) -> Int { ShardDigests.shard(ofKey: hash, bits: bits) }

    static func shard(of registration: Registration, bits: Int) -> Int {
        shard(of: AppliedDeclarations.fnv(registration), bits: bits)
    }

    static func shard(ofGroup name: String, bits: Int) -> Int {
        shard(of: AppliedDeclarations.fnv("group:" + name), bits: bits)
    }

    static func mix(_ value: UInt64) -> UInt64 {
        var z = value &+ 0x9E37_79B9_7F4A_7C15
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// The fragments of `ledger`, `1 << bits` of them, each a ledger of its lineage at serial 0 (so a fragment's
    /// bytes change only when its records do). Project and merged runs belong to the index, not to a fragment.
    /// A group's own record (its protection, its applied fingerprint, its pending state) is in the shard of its
    /// name, and each of its members in the shard of that registration, beside its topics and device name (with no
    /// protection there, so protecting a group rewrites one shard): a token is written once, where its other
    /// records are, not again in every group's shard. A device name goes where its registration's records are (a
    /// registration only in a pending group's members: that group's shard); a name of a registration recorded
    /// nowhere is dropped, as the single document drops it.
    package static func split(_ ledger: Ledger, bits: Int) -> [Ledger] {
        let buckets = ShardBuckets(ledger, bits: bits)
        return (0..<buckets.count).map(buckets.part)
    }

    /// Adds a fragment's records to `ledger` (lineage, serial and project stay the index's).
    package static func merge(_ part: Ledger, into ledger: inout Ledger) {
        for (topic, members) in part.topics { ledger.topics[topic, default: []].formUnion(members) }
        for (topic, members) in part.pending.subscriptions { ledger.pending.subscriptions[topic, default: []].formUnion(members) }
        // A group is in the shard of its name and, member by member, in its members' shards.
        ledger.groups.merge(part.groups) { held, more in
            LedgerGroup(members: held.members.union(more.members), protect: held.protect || more.protect)
        }
        ledger.pending.groups.formUnion(part.pending.groups)
        ledger.pending.groupMembers.merge(part.pending.groupMembers) { first, _ in first }
        ledger.applied.groups.merge(part.applied.groups) { first, _ in first }
        ledger.applied.registrations.merge(part.applied.registrations) { first, _ in first }
        ledger.deviceNames.merge(part.deviceNames) { first, _ in first }
    }
}

/// How many shards a state is cut into. A state whose single document would be at most `2 * targetBytes` is
/// written as that document (today's format: one object is then no bigger than a shard, and older fcmctl
/// versions still read it); a bigger one as `1 << bits` shards of about `targetBytes` each. The count is kept
/// while shards stay between a quarter and four times the target, so it changes (and every shard is rewritten)
/// only when the state has grown or shrunk several-fold.
package struct ShardPolicy: Sendable, Equatable {
    /// Always exactly `1 << fixedBits` shards, even for an empty state (tests, FCMCTL_STATE_SHARDS).
    package var fixedBits: Int?
    package var targetBytes: Int

    package static let maxBits = 14

    package init(fixedBits: Int? = nil, targetBytes: Int = 256 * 1024) {
        self.fixedBits = fixedBits.map { min(max($0, 0), Self.maxBits) }
        self.targetBytes = max(targetBytes, 1)
    }

    /// The default, or `FCMCTL_STATE_SHARDS=N` (a power of two): N shards whatever the size, so tests and the
    /// chaos scripts can run a small state on the sharded layout.
    package static var standard: ShardPolicy {
        if let text = getenv("FCMCTL_STATE_SHARDS").map({ String(cString: $0) }), let count = Int(text), count > 0,
            count & (count - 1) == 0
        {
            return ShardPolicy(fixedBits: count.trailingZeroBitCount)
        }
        return ShardPolicy()
    }

    /// Whether `bits` still suits a state whose encoding took `total` bytes.
    package func keeps(bits: Int, total: Int) -> Bool {
        if let fixedBits { return bits == fixedBits }
        if bits == 0 { return total <= 2 * targetBytes }
        let average = total >> bits
        return average >= targetBytes / 4 && (average <= 4 * targetBytes || bits == Self.maxBits)
    }

    /// The count for a state of `total` bytes, from scratch.
    package func bits(forTotal total: Int) -> Int {
        if let fixedBits { return fixedBits }
        guard total > 2 * targetBytes else { return 0 }
        var bits = 1
        while bits < Self.maxBits && (total >> bits) > targetBytes { bits += 1 }
        return bits
    }

    /// A first guess before anything is encoded (a fresh store, or one holding a single document): about 170
    /// bytes per registration (token and device name) and 8 per membership, as StateFileEncoder writes them.
    func estimatedBits(for ledger: Ledger) -> Int {
        if let fixedBits { return fixedBits }
        var memberships = 0
        var largest = 0
        for members in ledger.topics.values {
            memberships += members.count
            largest = max(largest, members.count)
        }
        for group in ledger.groups.values { memberships += group.members.count }
        let registrations = max(ledger.applied.registrations.count, ledger.deviceNames.count, largest)
        return bits(forTotal: registrations * 170 + ledger.applied.registrations.count * 36 + memberships * 8)
    }
}
