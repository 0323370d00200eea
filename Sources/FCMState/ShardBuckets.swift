import FCMCore

/// A ledger sorted into its shards in one pass, compactly, so the fragments can be made one at a time.
/// Making every fragment at once held each shard's own sets of every topic beside the ledger (at the default
/// fleet, 2,000 topics in each of 128 shards: 40 MB of small sets at the apply's peak); here a membership is
/// 8 bytes (the topic's number and the registration's ordinal) until its shard is made.
///
/// Where each record goes is `StateShards.split`'s rule: a registration's records in the shard of its value, a
/// group's own record, pending state and applied fingerprint in the shard of its name, a device name beside its
/// registration's records (one only in a pending group's members: in that group's shard; one recorded nowhere
/// is dropped).
package struct ShardBuckets {
    let lineage: String
    package let count: Int
    private var topicNames: [String] = []
    private var groupNames: [String] = []
    /// Per shard: topic number << 32 | registration ordinal.
    private var memberships: [[UInt64]]
    private var pendingSubscriptions: [[UInt64]]
    /// Per shard: group number << 32 | registration ordinal.
    private var groupMembers: [[UInt64]]
    private var groupRecords: [[(name: String, protect: Bool)]]
    private var pendingGroups: [[String]]
    private var pendingGroupMembers: [[(name: String, members: Set<Registration>)]]
    private var appliedGroups: [[(name: String, digest: UInt64)]]
    private var appliedRegistrations: [[(key: UInt64, digest: UInt64)]]
    private var deviceNames: [[(registration: Registration, name: String)]]

    package init(_ ledger: Ledger, bits: Int) {
        lineage = ledger.lineage
        count = 1 << bits
        memberships = Array(repeating: [], count: count)
        pendingSubscriptions = memberships
        groupMembers = memberships
        groupRecords = Array(repeating: [], count: count)
        pendingGroups = Array(repeating: [], count: count)
        pendingGroupMembers = Array(repeating: [], count: count)
        appliedGroups = Array(repeating: [], count: count)
        appliedRegistrations = Array(repeating: [], count: count)
        deviceNames = Array(repeating: [], count: count)

        // The shard of each registration with records, by ordinal (0xFFFF: none yet): computed once, not once
        // per membership, in 2 bytes a registration rather than a dictionary entry.
        var home = [UInt16](repeating: .max, count: RegistrationTable.shared.count)
        func place(_ registration: Registration) -> Int {
            let ordinal = Int(registration.ordinal)
            if home[ordinal] != .max { return Int(home[ordinal]) }
            let index = StateShards.shard(of: registration, bits: bits)
            home[ordinal] = UInt16(index)
            return index
        }
        var topicNumbers: [String: UInt64] = [:]
        func number(ofTopic name: String) -> UInt64 {
            if let known = topicNumbers[name] { return known }
            topicNumbers[name] = UInt64(topicNames.count)
            topicNames.append(name)
            return UInt64(topicNames.count - 1)
        }
        for (topic, members) in ledger.topics {
            let number = number(ofTopic: topic) << 32
            for member in members { memberships[place(member)].append(number | UInt64(member.ordinal)) }
        }
        for (topic, members) in ledger.pending.subscriptions {
            let number = number(ofTopic: topic) << 32
            for member in members { pendingSubscriptions[place(member)].append(number | UInt64(member.ordinal)) }
        }
        for (name, group) in ledger.groups {
            groupRecords[StateShards.shard(ofGroup: name, bits: bits)].append((name, group.protect))
            let number = UInt64(groupNames.count) << 32
            groupNames.append(name)
            for member in group.members { groupMembers[place(member)].append(number | UInt64(member.ordinal)) }
        }
        var groupHome: [Registration: (name: String, shard: Int)] = [:]
        for name in ledger.pending.groups { pendingGroups[StateShards.shard(ofGroup: name, bits: bits)].append(name) }
        for (name, members) in ledger.pending.groupMembers {
            let index = StateShards.shard(ofGroup: name, bits: bits)
            pendingGroupMembers[index].append((name, members))
            for member in members where home[Int(member.ordinal)] == .max {
                if let known = groupHome[member], known.name <= name { continue }
                groupHome[member] = (name, index)
            }
        }
        for (name, digest) in ledger.applied.groups { appliedGroups[StateShards.shard(ofGroup: name, bits: bits)].append((name, digest)) }
        for (key, digest) in ledger.applied.registrations {
            appliedRegistrations[StateShards.shard(of: key, bits: bits)].append((key, digest))
        }
        for (registration, name) in ledger.deviceNames {
            let placed = home[Int(registration.ordinal)]
            if placed != .max {
                deviceNames[Int(placed)].append((registration, name))
            } else if let index = groupHome[registration]?.shard {
                deviceNames[index].append((registration, name))
            }
        }
    }

    /// Shard `index`'s records as a ledger of the state's lineage at serial 0.
    package func part(_ index: Int) -> Ledger {
        var part = Ledger(lineage: lineage, serial: 0)
        for entry in memberships[index] {
            part.topics[topicNames[Int(entry >> 32)], default: []].insert(Registration(ordinal: UInt32(truncatingIfNeeded: entry)))
        }
        for entry in pendingSubscriptions[index] {
            part.pending.subscriptions[topicNames[Int(entry >> 32)], default: []].insert(
                Registration(ordinal: UInt32(truncatingIfNeeded: entry)))
        }
        for record in groupRecords[index] { part.groups[record.name] = LedgerGroup(members: [], protect: record.protect) }
        for entry in groupMembers[index] {
            part.groups[groupNames[Int(entry >> 32)], default: LedgerGroup(members: [], protect: false)].members.insert(
                Registration(ordinal: UInt32(truncatingIfNeeded: entry)))
        }
        for name in pendingGroups[index] { part.pending.groups.insert(name) }
        for entry in pendingGroupMembers[index] { part.pending.groupMembers[entry.name] = entry.members }
        for entry in appliedGroups[index] { part.applied.groups[entry.name] = entry.digest }
        for entry in appliedRegistrations[index] { part.applied.registrations[entry.key] = entry.digest }
        for entry in deviceNames[index] { part.deviceNames[entry.registration] = entry.name }
        return part
    }

    /// Forgets shard `index`'s records once its fragment is made.
    package mutating func release(_ index: Int) {
        memberships[index] = []
        pendingSubscriptions[index] = []
        groupMembers[index] = []
        groupRecords[index] = []
        pendingGroups[index] = []
        pendingGroupMembers[index] = []
        appliedGroups[index] = []
        appliedRegistrations[index] = []
        deviceNames[index] = []
    }
}
