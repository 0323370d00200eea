/// What the manifests declared at the last successful apply, as fingerprints: per registration, the
/// topics (and their ownership) it was declared in; per group, its declared members. `plan
/// --refresh=changed` reads from FCM only what differs from this, so a pull request touching ten
/// registrations of a large fleet is planned from ten reads. Fingerprints, not copies: 16 bytes per
/// registration instead of its memberships.
package struct AppliedDeclarations: Hashable, Sendable {
    package var registrations: [UInt64: UInt64] = [:]
    package var groups: [String: UInt64] = [:]

    package init(registrations: [UInt64: UInt64] = [:], groups: [String: UInt64] = [:]) {
        self.registrations = registrations
        self.groups = groups
    }

    package var isEmpty: Bool { registrations.isEmpty && groups.isEmpty }

    package static func of(_ desired: DesiredState) -> AppliedDeclarations {
        var applied = AppliedDeclarations()
        applied.registrations = Self.declarations(desired)
        for (name, group) in desired.groups {
            applied.groups[name] = group.members.reduce(Self.fnv("group:" + name)) { $0 &+ Self.mix(Self.fnv($1)) }
        }
        return applied
    }

    /// Per registration, an order-independent sum over the topics declaring it.
    static func declarations(_ desired: DesiredState) -> [UInt64: UInt64] {
        keyed(desired).byKey
    }

    /// The same sums per registration, and the fingerprint key of each: the key (a hash of the registration's
    /// bytes) is computed once per registration, not once per membership, and no String is made for it. Two
    /// registrations whose keys collide share one sum, as they share one entry in the state.
    static func keyed(_ desired: DesiredState) -> (byKey: [UInt64: UInt64], keys: [(Registration, UInt64)]) {
        var sums: [Registration: UInt64] = [:]
        for topic in desired.topics.values {
            let topicHash = Self.topicHash(topic)
            for member in topic.members { sums[member, default: 0] &+= topicHash }
        }
        var byKey = [UInt64: UInt64](minimumCapacity: sums.count)
        var keys: [(Registration, UInt64)] = []
        keys.reserveCapacity(sums.count)
        for (registration, sum) in sums {
            let key = fnv(registration)
            keys.append((registration, key))
            byKey[key, default: 0] &+= sum
        }
        return (byKey, keys)
    }

    /// What declaring a registration in `topic` adds to its sum.
    static func topicHash(_ topic: DesiredTopic) -> UInt64 { mix(fnv("topic:\(topic.name):\(topic.ownership.rawValue)")) }

    /// Declared registrations whose declaration differs from the last apply (or that it did not know).
    ///
    /// Sums are kept in an array by registration ordinal, not a dictionary, and each is compared with the
    /// stored one by itself: at ten million registrations the dictionaries `keyed` builds were half a gigabyte
    /// of a pull request's plan. Two registrations whose keys collide share one stored sum (`keyed`); each one's
    /// own sum then differs from it, so both are read again: a collision costs reads, never a missed change.
    package func changedRegistrations(in desired: DesiredState) -> Set<Registration> {
        var changed = Set<Registration>()
        Self.forEachDeclared(in: desired) { registration, sum in
            if registrations[Self.fnv(registration)] != sum { changed.insert(registration) }
        }
        return changed
    }

    /// Each registration a topic declares, once, with the sum of the topics declaring it: summed in an array by
    /// registration ordinal, then visited in ordinal order.
    package static func forEachDeclared(in desired: DesiredState, _ body: (Registration, UInt64) -> Void) {
        let count = RegistrationTable.shared.count
        var sums = [UInt64](repeating: 0, count: count)
        var declared = [UInt64](repeating: 0, count: count / 64 + 1)
        for topic in desired.topics.values {
            let topicHash = Self.topicHash(topic)
            for member in topic.members {
                let ordinal = Int(member.ordinal)
                sums[ordinal] &+= topicHash
                declared[ordinal >> 6] |= 1 << UInt64(ordinal & 63)
            }
        }
        for (word, bits) in declared.enumerated() where bits != 0 {
            var rest = bits
            while rest != 0 {
                let ordinal = word << 6 | rest.trailingZeroBitCount
                rest &= rest - 1
                body(Registration(ordinal: UInt32(ordinal)), sums[ordinal])
            }
        }
    }

    /// Whether the last apply's manifests declared the registration in a topic.
    package func declares(_ registration: Registration) -> Bool {
        // A first apply asks it of every registration it sends to: no hash of each when nothing is recorded.
        !registrations.isEmpty && registrations[Self.fnv(registration)] != nil
    }

    /// Declared groups whose members differ from the last apply, and new ones.
    package func changedGroups(in desired: DesiredState) -> Set<String> {
        let now = Self.of(DesiredState(project: desired.project, groups: desired.groups)).groups
        return Set(now.filter { groups[$0.key] != $0.value }.keys)
    }

    /// Forgets what an apply could not settle, so the next `--refresh=changed` reads them again. One that
    /// `previous` (the apply before) declared stays declared, as unsettled: fcmctl still knows it, so if it has
    /// died since, that is drift, not a registration the manifest introduces.
    package mutating func forget(_ registrations: some Sequence<Registration>, previous: AppliedDeclarations = AppliedDeclarations()) {
        for registration in registrations {
            let key = Self.fnv(registration)
            self.registrations[key] = previous.registrations[key] == nil ? nil : Self.unsettled
        }
    }

    /// Marks a registration the last apply declared as unsettled (see `Ledger.recordSubscription`).
    package mutating func markUnsettled(_ registration: Registration) {
        // A first apply has nothing to mark: no hash of every registration it records.
        guard !registrations.isEmpty else { return }
        let key = Self.fnv(registration)
        if registrations[key] != nil { registrations[key] = Self.unsettled }
    }

    /// The fingerprint of a registration declared but not settled: it matches no declaration, so
    /// `--refresh=changed` reads it again.
    static let unsettled: UInt64 = 0

    package static func fnv(_ text: String) -> UInt64 {
        var text = text
        return text.withUTF8(fnv)
    }

    /// The fingerprint key of a registration: `fnv` of its text, read where the table keeps it, once
    /// (`FingerprintMemo`).
    package static func fnv(_ registration: Registration) -> UInt64 {
        FingerprintMemo.shared.key(registration.ordinal) { registration.withUTF8(fnv) }
    }

    static func fnv(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 }
        return hash
    }

    /// A finaliser, so sums of FNV values do not cancel in patterned ways (splitmix64's).
    static func mix(_ value: UInt64) -> UInt64 {
        var z = value &+ 0x9E37_79B9_7F4A_7C15
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

extension Ledger {
    /// After an apply: what the manifest declared is now in FCM, except for what did not settle (failed,
    /// not attempted, unreadable), which the next `--refresh=changed` reads again. `unsettledObjects`: the
    /// addresses of what did not settle; only groups among them matter here.
    package mutating func recordApplied(
        _ declared: DesiredState, unsettled: some Sequence<Registration>, unsettledObjects: some Sequence<Address> = [Address]()
    ) {
        let unsettled = Set(unsettled)
        var next = AppliedDeclarations.of(declared)
        next.forget(unsettled, previous: applied)
        for case .group(let name) in unsettledObjects { next.groups[name] = nil }
        // A subscription kept although the manifests no longer declare it (an `observe` topic never removes one)
        // leaves its registration unsettled: a plan reads it again, as `--refresh=all` would, and its shard is
        // never taken as unchanged.
        for (topic, members) in topics {
            let declaredMembers = declared.topics[topic]?.members
            for member in members where declaredMembers?.contains(member) != true { next.markUnsettled(member) }
        }
        applied = next
        declarationsTrusted = true
        // A name makes its registration one fcmctl knows: one whose every change failed (a token FCM does not know,
        // created without a read first) must stay unknown, so the next plan still refuses it before sending.
        for (registration, name) in declared.deviceNames where !unsettled.contains(registration) || deviceNames[registration] != nil {
            deviceNames[registration] = name
        }
    }

    /// Devices whose manifest entry now names another registration than the one fcmctl recorded for them:
    /// the name, the old and the new registration, sorted by name.
    package func rotations(in desired: DesiredState) -> [(name: String, old: Registration, new: Registration)] {
        var current: [String: Registration] = [:]
        for (registration, name) in desired.deviceNames { current[name] = registration }
        var found: [(name: String, old: Registration, new: Registration)] = []
        for (old, name) in deviceNames where desired.deviceNames[old] == nil {
            if let new = current[name], new != old { found.append((name, old, new)) }
        }
        return found.sorted { ($0.name, $0.old) < ($1.name, $1.old) }
    }
}
