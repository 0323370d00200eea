import Foundation

/// fcmctl's own record of what it manages: the device groups it keeps and the topic subscriptions it
/// created. FCM cannot list a topic's subscribers, so this ledger is how fcmctl knows what it may remove.
/// `lineage` names one history of this file and `serial` counts its writes, as in Terraform's state.
package struct Ledger: Codable, Hashable, Sendable {
    package static let currentVersion = 1

    package var version: Int
    package var lineage: String
    package var serial: Int
    package var groups: [String: LedgerGroup]
    /// topic name → registrations whose subscription fcmctl created.
    package var topics: [String: Set<LedgerRegistration>]

    package init(lineage: String = UUID().uuidString.lowercased(), serial: Int = 0) {
        self.version = Ledger.currentVersion
        self.lineage = lineage
        self.serial = serial
        self.groups = [:]
        self.topics = [:]
    }

    package var isEmpty: Bool { groups.isEmpty && topics.isEmpty }

    private enum CodingKeys: String, CodingKey {
        case version, lineage, serial, groups, topics
    }

    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        version = try container.decode(Int.self, forKey: .version)
        lineage = try container.decode(String.self, forKey: .lineage)
        serial = try container.decode(Int.self, forKey: .serial)
        groups = try container.decodeIfPresent([String: LedgerGroup].self, forKey: .groups) ?? [:]
        topics = try container.decodeIfPresent([String: Set<LedgerRegistration>].self, forKey: .topics) ?? [:]
    }

    /// Members are written sorted so the same ledger always produces the same file (diffable, reviewable).
    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(version, forKey: .version)
        try container.encode(lineage, forKey: .lineage)
        try container.encode(serial, forKey: .serial)
        try container.encode(groups, forKey: .groups)
        try container.encode(topics.mapValues { $0.sorted() }, forKey: .topics)
    }

    package func managedSubscribers(of topic: String) -> Set<Registration> {
        Set((topics[topic] ?? []).map(\.registration))
    }

    package mutating func recordSubscription(_ registration: Registration, topic: String) {
        topics[topic, default: []].insert(LedgerRegistration(registration))
    }

    package mutating func forgetSubscription(_ registration: Registration, topic: String) {
        topics[topic]?.remove(LedgerRegistration(registration))
        if topics[topic]?.isEmpty == true { topics[topic] = nil }
    }

    package mutating func recordGroup(_ name: String, members: Set<Registration>) {
        if members.isEmpty {
            groups[name] = nil
        } else {
            let protect = groups[name]?.protect ?? false
            groups[name] = LedgerGroup(members: Set(members.map(LedgerRegistration.init)), protect: protect)
        }
    }

    /// Remembers which groups the manifest protects, so a protected group that later disappears from the
    /// manifest is kept rather than deleted.
    package mutating func recordProtection(from desired: DesiredState) {
        for name in groups.keys {
            if let group = desired.groups[name] { groups[name]?.protect = group.protect }
        }
    }

    /// Every registration the ledger mentions in a topic: these must be refreshed even if the manifest
    /// no longer names them, or fcmctl could not clean up after itself.
    package var subscribedRegistrations: Set<Registration> {
        var all = Set<Registration>()
        for members in topics.values { for member in members { all.insert(member.registration) } }
        return all
    }
}

package struct LedgerGroup: Codable, Hashable, Sendable {
    package var members: Set<LedgerRegistration>
    package var protect: Bool

    package init(members: Set<LedgerRegistration>, protect: Bool = false) {
        self.members = members
        self.protect = protect
    }

    private enum CodingKeys: String, CodingKey { case members, protect }

    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        members = try container.decode(Set<LedgerRegistration>.self, forKey: .members)
        protect = try container.decodeIfPresent(Bool.self, forKey: .protect) ?? false
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(members.sorted(), forKey: .members)
        if protect { try container.encode(true, forKey: .protect) }
    }

    package var registrations: Set<Registration> { Set(members.map(\.registration)) }
}

/// A registration as stored: `{"token": "…"}` or `{"fid": "…"}`, so the kind survives a round trip.
package struct LedgerRegistration: Codable, Hashable, Sendable, Comparable {
    package let registration: Registration

    package init(_ registration: Registration) { self.registration = registration }

    package static func < (lhs: LedgerRegistration, rhs: LedgerRegistration) -> Bool { lhs.registration < rhs.registration }

    private enum CodingKeys: String, CodingKey {
        case token
        case fid
    }

    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        if let fid = try container.decodeIfPresent(String.self, forKey: .fid) {
            registration = Registration(value: fid, kind: .fid)
        } else {
            registration = Registration(value: try container.decode(String.self, forKey: .token), kind: .token)
        }
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(registration.value, forKey: registration.kind == .fid ? .fid : .token)
    }
}
