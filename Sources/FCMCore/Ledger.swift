/// fcmctl's own record of what it manages: the device groups it keeps and the topic subscriptions it
/// created. FCM cannot list a topic's subscribers, so this ledger is how fcmctl knows what it may remove.
/// `lineage` names one history of the state and `serial` counts its writes, as in Terraform's state.
/// How it is stored is FCMState's business; this is the value every stage works on.
package struct Ledger: Hashable, Sendable {
    package var lineage: String
    package var serial: Int
    package var groups: [String: LedgerGroup]
    /// topic name → registrations whose subscription fcmctl created.
    package var topics: [String: Set<Registration>]
    /// Changes fcmctl may have made: journaled intents with no completion. The next refresh decides.
    package var pending: PendingChanges
    /// What the manifests declared when an apply last succeeded (for `plan --refresh=changed`).
    package var applied = AppliedDeclarations()
    /// The device names the manifests gave the registrations fcmctl records, as of the last apply: a token
    /// that rotated away is still shown with its device's name.
    package var deviceNames: [Registration: String] = [:]
    /// The project these records are in (empty in a state written before states were bound to one): a run
    /// for another project refuses the state, and every write records the project of the run that makes it.
    package var project = ProjectBinding()
    /// Set when only some shards of a sharded state were read (`plan --refresh=changed` of a change that
    /// touches a few): the records here are those shards' whole records, and a write replaces only them.
    package var slice: LedgerSlice?
    /// Whether `applied` is known to account for every subscription recorded (set by an apply of the whole
    /// manifests, kept by a state whose index records digests): only then does a write record per-shard digests
    /// (`ShardDigests`). A state written by an fcmctl before the digests may hold a subscription a targeted
    /// apply or an import recorded without unsettling its registration.
    package var declarationsTrusted = false

    package init(lineage: String = newLineage(), serial: Int = 0) {
        self.lineage = lineage
        self.serial = serial
        self.groups = [:]
        self.topics = [:]
        self.pending = PendingChanges()
    }

    package var isEmpty: Bool { groups.isEmpty && topics.isEmpty && pending.isEmpty }

    /// The same records, ignoring lineage and serial: whether a write would change anything.
    package func hasSameRecords(as other: Ledger) -> Bool {
        groups == other.groups && topics == other.topics && pending == other.pending && applied == other.applied && project == other.project
    }

    /// Records that this state is `project`'s, keeping what it knew that the run does not (an id from an
    /// earlier run whose manifest named one).
    package mutating func bind(to project: ProjectBinding) {
        self.project = self.project.completed(by: project)
    }

    package func managedSubscribers(of topic: String) -> Set<Registration> { topics[topic] ?? [] }

    /// A subscription recorded outside an apply of the whole manifest (an import, a targeted apply, a journal
    /// replayed) may be one the last apply did not declare: the registration is marked unsettled, so the next
    /// `--refresh=changed` reads it again and its shard is not taken as unchanged. An apply of the whole
    /// manifest settles it again (`recordApplied`).
    package mutating func recordSubscription(_ registration: Registration, topic: String) {
        topics[topic, default: []].insert(registration)
        pending.forgetSubscription(registration, topic: topic)
        applied.markUnsettled(registration)
    }

    package mutating func forgetSubscription(_ registration: Registration, topic: String) {
        topics[topic]?.remove(registration)
        if topics[topic]?.isEmpty == true { topics[topic] = nil }
        pending.forgetSubscription(registration, topic: topic)
    }

    package mutating func recordGroup(_ name: String, members: Set<Registration>) {
        pending.forgetGroup(name)
        if members.isEmpty {
            groups[name] = nil
        } else {
            let protect = groups[name]?.protect ?? false
            groups[name] = LedgerGroup(members: members, protect: protect)
        }
    }

    /// Remembers which groups the manifest protects, so a protected group that later disappears from the
    /// manifest is kept rather than deleted.
    package mutating func recordProtection(from desired: DesiredState) {
        for name in groups.keys {
            if let group = desired.groups[name] { groups[name]?.protect = group.protect }
        }
    }

    /// Every registration the ledger mentions in a topic, recorded or pending: these must be refreshed even
    /// if the manifest no longer names them, or fcmctl could not clean up after itself.
    package var subscribedRegistrations: Set<Registration> {
        var all = Set<Registration>()
        for members in topics.values { all.formUnion(members) }
        for members in pending.subscriptions.values { all.formUnion(members) }
        return all
    }

    /// Groups fcmctl keeps or may have created.
    package var knownGroupNames: Set<String> { Set(groups.keys).union(pending.groups) }

    /// Serial of the next write; a state at the end of the integer range is refused, never wrapped.
    package func nextSerial() throws -> Int {
        let (next, overflow) = serial.addingReportingOverflow(1)
        guard !overflow else { throw LedgerError.serialExhausted(serial) }
        return next
    }
}

/// The engine says it in words (`SavedPlanError.swift`).
package enum LedgerError: Error, Sendable {
    case serialExhausted(Int)
}

/// A lineage id: random, so two histories never share one.
package func newLineage() -> String {
    var generator = SystemRandomNumberGenerator()
    let hex = (0..<4).map { _ in String(generator.next() as UInt32, radix: 16) }
    return hex.map { String(repeating: "0", count: 8 - $0.count) + $0 }.joined()
}

package struct LedgerGroup: Hashable, Sendable {
    package var members: Set<Registration>
    package var protect: Bool

    package init(members: Set<Registration>, protect: Bool = false) {
        self.members = members
        self.protect = protect
    }

    package var registrations: Set<Registration> { members }
}

/// What an interrupted run may have done: an intent was journaled and the request may have been sent,
/// but no completion was. Such changes are checked against FCM by the next refresh.
package struct PendingChanges: Hashable, Sendable {
    package var subscriptions: [String: Set<Registration>] = [:]
    package var groups: Set<String> = []
    /// Every registration a pending group may hold (its record before, and what the unsettled step sent):
    /// FCM cannot list a group's members, and these are what it takes to remove them all.
    package var groupMembers: [String: Set<Registration>] = [:]

    package init() {}

    package mutating func forgetGroup(_ name: String) {
        groups.remove(name)
        groupMembers[name] = nil
    }

    package var isEmpty: Bool { subscriptions.isEmpty && groups.isEmpty }

    package var count: Int { subscriptions.values.reduce(0) { $0 + $1.count } + groups.count }

    package mutating func forgetSubscription(_ registration: Registration, topic: String) {
        // Looked up first: every change an apply records passes here, and the optional-chained mutation of a
        // dictionary's value allocated three times per call even when the topic had nothing pending.
        guard let index = subscriptions.index(forKey: topic), subscriptions.values[index].contains(registration) else { return }
        subscriptions.values[index].remove(registration)
        if subscriptions.values[index].isEmpty { subscriptions.remove(at: index) }
    }
}
