import Synchronization

/// Per shard of a sharded state, a digest of what was declared for its registrations at the last apply, so
/// `plan --refresh=changed` (and the apply of its plan) read only the shards whose declarations changed
/// (docs/state.md, "Reading only what changed"). The state records each shard's digest in its index
/// (`recorded`); a run computes the same from the manifests (`DeclaredShards.init`) and loads only the shards
/// where the two differ. A shard whose records its applied sums do not account for (pending changes, groups, a
/// subscription the last apply did not declare) records no digest and is always loaded.
package enum ShardDigests {
    /// The shard of a fingerprint key among `1 << bits`: its mixed top bits, as the state cuts its records.
    package static func shard(ofKey key: UInt64, bits: Int) -> Int {
        bits == 0 ? 0 : Int(AppliedDeclarations.mix(key) >> UInt64(64 - bits))
    }

    /// One registration's share of its shard's digest: its key and its declaration sum, mixed together, so
    /// the same sums under other keys give another digest.
    static func term(key: UInt64, sum: UInt64) -> UInt64 {
        AppliedDeclarations.mix(key &+ AppliedDeclarations.mix(sum ^ 0x6A09_E667_F3BC_C908))
    }

    /// The digest a shard's records answer for, or nil when the shard holds something a digest of applied sums
    /// cannot vouch for: pending changes, groups, a subscription of a registration whose last apply left it
    /// unsettled or did not declare it. A run loads such a shard whatever its manifests say.
    package static func recorded(_ part: Ledger) -> UInt64? {
        guard part.pending.isEmpty, part.pending.groupMembers.isEmpty, part.groups.isEmpty, part.applied.groups.isEmpty else { return nil }
        for members in part.topics.values {
            for member in members {
                let sum = part.applied.registrations[AppliedDeclarations.fnv(member)]
                if sum == nil || sum == AppliedDeclarations.unsettled { return nil }
            }
        }
        var digest: UInt64 = 0
        for (key, sum) in part.applied.registrations {
            if sum == AppliedDeclarations.unsettled { return nil }
            digest &+= term(key: key, sum: sum)
        }
        return digest
    }
}

/// What a state's index tells a reader before any shard is read: how it is cut, each shard's recorded digest
/// (nil: none, load it), and whether it records device groups (a group's members span shards: such a state is
/// read whole).
package struct ShardOutline: Sendable, Equatable {
    package var bits: Int
    package var recorded: [UInt64?]
    package var hasGroups: Bool

    package init(bits: Int, recorded: [UInt64?], hasGroups: Bool) {
        self.bits = bits
        self.recorded = recorded
        self.hasGroups = hasGroups
    }
}

/// Given a state's outline, the shards to load, or nil for all of them.
package typealias ShardSelector = @Sendable (ShardOutline) -> Set<Int>?

/// The part of a sharded state a ledger holds: the shards loaded, of `1 << bits`. A write of such a ledger
/// replaces those shards and keeps every other one as its index names it.
package struct LedgerSlice: Hashable, Sendable {
    package var bits: Int
    package var loaded: Set<Int>

    package init(bits: Int, loaded: Set<Int>) {
        self.bits = bits
        self.loaded = loaded
    }

    package func holds(key: UInt64) -> Bool { loaded.contains(ShardDigests.shard(ofKey: key, bits: bits)) }
}

/// The manifests' side of the comparison: each declared registration's shard and each shard's digest, as the
/// state would record them if these declarations had been applied.
package struct DeclaredShards: Sendable {
    package let bits: Int
    package let digests: [UInt64]
    /// Declared registrations per shard.
    package let counts: [Int]
    /// Shard by registration ordinal; `.max`: not declared in a topic.
    let home: [UInt16]

    /// Each declared registration's sum (`AppliedDeclarations.forEachDeclared`) as a term of its shard's digest:
    /// one pass over the memberships and one hash per registration.
    package init(_ desired: DesiredState, bits: Int) {
        self.bits = bits
        var digests = [UInt64](repeating: 0, count: 1 << bits)
        var counts = [Int](repeating: 0, count: 1 << bits)
        var home = [UInt16](repeating: .max, count: RegistrationTable.shared.count)
        AppliedDeclarations.forEachDeclared(in: desired) { registration, sum in
            let key = AppliedDeclarations.fnv(registration)
            let shard = ShardDigests.shard(ofKey: key, bits: bits)
            digests[shard] &+= ShardDigests.term(key: key, sum: sum)
            counts[shard] += 1
            home[Int(registration.ordinal)] = UInt16(shard)
        }
        self.digests = digests
        self.counts = counts
        self.home = home
    }

    /// The shards whose recorded digest is missing or differs from the declared one; nil when that is every shard.
    package func differing(from recorded: [UInt64?]) -> Set<Int>? {
        guard recorded.count == digests.count else { return nil }
        var differing = Set<Int>()
        for (shard, digest) in recorded.enumerated() where digest != digests[shard] { differing.insert(shard) }
        return differing.count == digests.count ? nil : differing
    }

    /// Registrations declared in shards outside `slice`: what the whole manifests name that a sliced plan did
    /// not look at, for the refresh summary.
    package func declaredOutside(_ slice: LedgerSlice) -> Int {
        counts.indices.reduce(0) { $0 + (slice.loaded.contains($1) ? 0 : counts[$1]) }
    }

    /// Whether a registration is declared in a topic and its records are in one of `slice`'s shards.
    package func membership(in slice: LedgerSlice) -> @Sendable (Registration) -> Bool {
        var keep = [Bool](repeating: false, count: 1 << bits)
        for shard in slice.loaded where shard < keep.count { keep[shard] = true }
        return { [home, keep] registration in
            let ordinal = Int(registration.ordinal)
            return ordinal < home.count && home[ordinal] != .max && keep[Int(home[ordinal])]
        }
    }

    /// Whether a registration's records would be in one of `slice`'s shards, declared in a topic or not: the
    /// devices to name (a device dropped from its only topic is still named, as a whole read names it).
    package func records(in slice: LedgerSlice) -> @Sendable (Registration) -> Bool {
        let declared = membership(in: slice)
        return { [home, bits] registration in
            let ordinal = Int(registration.ordinal)
            if ordinal < home.count && home[ordinal] != .max { return declared(registration) }
            return slice.loaded.contains(ShardDigests.shard(ofKey: AppliedDeclarations.fnv(registration), bits: bits))
        }
    }

    /// `desired` restricted to the registrations of `slice`'s shards: their topic memberships and device names
    /// (unless the names are deferred: the caller names them). Groups are not sliced (a state with groups is read
    /// whole); local groups are the manifest's own.
    package func slice(_ desired: DesiredState, to slice: LedgerSlice) -> DesiredState {
        let kept = membership(in: slice)
        var sliced = desired
        if !desired.namesDeferred {
            let named = records(in: slice)
            sliced.deviceNames = desired.deviceNames.filter { named($0.key) }
        }
        for (name, topic) in desired.topics { sliced.topics[name]?.members = topic.members.filter(kept) }
        return sliced
    }
}

/// Carries what a selector computed out of the state's read: the declared shards, made once.
package final class DeclaredShardsBox: Sendable {
    private let value = Mutex<DeclaredShards?>(nil)

    package init() {}

    package var shards: DeclaredShards? { value.withLock { $0 } }

    func store(_ shards: DeclaredShards) { value.withLock { $0 = shards } }

    /// A selector that loads the shards whose declarations in `desired` differ from the state's records, and
    /// keeps what it computed here.
    package func selector(for desired: DesiredState) -> ShardSelector {
        { [self] outline in
            guard !outline.hasGroups, desired.groups.isEmpty, outline.bits > 0 else { return nil }
            let shards = DeclaredShards(desired, bits: outline.bits)
            store(shards)
            return shards.differing(from: outline.recorded)
        }
    }
}
