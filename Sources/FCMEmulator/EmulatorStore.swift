import Foundation

/// Everything the emulator knows, behind one actor so concurrent requests see a consistent FCM.
actor EmulatorStore {
    struct RegistrationRecord {
        var kind: String
        /// topic → creation time, as the v1 API reports it.
        var topics: [String: Date] = [:]
        var uninstalled = false
    }

    struct GroupName: Hashable {
        var senderId: String
        var name: String
    }

    struct GroupRecord {
        var id: Int
        var members: [String]
    }

    struct LogEntry: Sendable {
        var method: String
        var path: String
        var status: Int
    }

    enum RegistrationCheck {
        case valid
        case malformed
        /// Uninstalled, or unknown in strict mode: FCM answers NOT_FOUND / UNREGISTERED.
        case notFound
    }

    let strictRegistrations: Bool
    private(set) var registrations: [String: RegistrationRecord] = [:]
    private(set) var groups: [GroupName: GroupRecord] = [:]
    private var groupNamesByID: [Int: GroupName] = [:]
    private var nextGroupID = 1
    private(set) var log: [LogEntry] = []

    init(strictRegistrations: Bool) {
        self.strictRegistrations = strictRegistrations
    }

    // MARK: Registrations

    static func isWellFormed(_ id: String) -> Bool {
        !id.isEmpty && id.utf8.count <= 4096
            && !id.unicodeScalars.contains { $0.properties.isWhitespace || $0.value < 0x20 }
    }

    static func kind(of id: String) -> String {
        let fid = id.utf8.count == 22 && "cdef".contains(id.first ?? " ")
            && id.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }
        return fid ? "fid" : "token"
    }

    /// By default FCM's view is simulated as "every well-formed registration exists"; strict mode only
    /// knows registrations added through the admin API, for tests of invalid-token handling.
    /// Only a mutating request records a first-seen registration, so reads leave the state dump unchanged.
    func check(_ id: String, recordFirstUse: Bool = true) -> RegistrationCheck {
        guard Self.isWellFormed(id) else { return .malformed }
        if let record = registrations[id] { return record.uninstalled ? .notFound : .valid }
        if strictRegistrations { return .notFound }
        if recordFirstUse { registrations[id] = RegistrationRecord(kind: Self.kind(of: id)) }
        return .valid
    }

    func register(_ id: String, kind: String) {
        registrations[id, default: RegistrationRecord(kind: kind)].uninstalled = false
    }

    /// The app was uninstalled: its subscriptions vanish and device groups drop it, as FCM does.
    func uninstall(_ id: String) -> Bool {
        guard registrations[id] != nil else { return false }
        registrations[id]?.uninstalled = true
        registrations[id]?.topics = [:]
        for (name, group) in groups where group.members.contains(id) {
            let remaining = group.members.filter { $0 != id }
            if remaining.isEmpty { deleteGroup(name) } else { groups[name]?.members = remaining }
        }
        return true
    }

    // MARK: Topic subscriptions

    func topics(of id: String) -> [String: Date] { registrations[id]?.topics ?? [:] }

    /// Returns false when the subscription already existed.
    func subscribe(_ id: String, to topic: String) -> Bool {
        if registrations[id]?.topics[topic] != nil { return false }
        registrations[id]?.topics[topic] = Date()
        return true
    }

    /// Returns false when there was no such subscription.
    func unsubscribe(_ id: String, from topic: String) -> Bool {
        registrations[id]?.topics.removeValue(forKey: topic) != nil
    }

    // MARK: Device groups

    func group(named name: GroupName) -> GroupRecord? { groups[name] }

    func group(id: Int) -> (GroupName, GroupRecord)? {
        guard let name = groupNamesByID[id], let record = groups[name] else { return nil }
        return (name, record)
    }

    func createGroup(_ name: GroupName, members: [String]) -> GroupRecord {
        let record = GroupRecord(id: nextGroupID, members: members)
        nextGroupID += 1
        groups[name] = record
        groupNamesByID[record.id] = name
        return record
    }

    func setMembers(_ name: GroupName, _ members: [String]) {
        if members.isEmpty { deleteGroup(name) } else { groups[name]?.members = members }
    }

    private func deleteGroup(_ name: GroupName) {
        if let id = groups[name]?.id { groupNamesByID[id] = nil }
        groups[name] = nil
    }

    // MARK: Admin

    func record(_ entry: LogEntry) { log.append(entry) }

    func reset() {
        registrations = [:]
        groups = [:]
        groupNamesByID = [:]
        log = []
    }

    /// A deterministic dump: sorted, and without the request log, so two dumps compare equal exactly
    /// when FCM's visible state is the same.
    func stateDump() -> EmulatorResponse {
        let groupList: [[String: Any]] = groups.sorted { ($0.key.senderId, $0.key.name) < ($1.key.senderId, $1.key.name) }.map {
            ["sender_id": $0.key.senderId, "name": $0.key.name, "members": $0.value.members.sorted()]
        }
        let registrationList: [[String: Any]] = registrations.sorted { $0.key < $1.key }.map {
            ["id": $0.key, "kind": $0.value.kind, "uninstalled": $0.value.uninstalled, "topics": $0.value.topics.keys.sorted()]
        }
        return .json(200, ["groups": groupList, "registrations": registrationList])
    }
}
