import Foundation

/// Everything the emulator knows, behind one actor so concurrent requests see a consistent FCM.
actor EmulatorStore {
    struct RegistrationRecord: Codable, Sendable {
        var kind: String
        /// topic → creation time, as the v1 API reports it.
        var topics: [String: Date] = [:]
        var uninstalled = false
        var platform = "ANDROID"
        var app = "com.example.app"
        var inbox: [InboxMessage] = []
        /// The Firebase project (id) the registration belongs to; nil: any (first used by a group request
        /// whose sender no project claims, in auto-register mode).
        var project: String?
    }

    struct InboxMessage: Codable, Sendable {
        var name: String
        var receivedAt: Date
        /// The message as sent, JSON.
        var message: String
    }

    /// Topics are a project's: the same name in two projects is two topics. A registration without a
    /// project files its subscriptions under "".
    struct TopicKey: Hashable, Comparable, Sendable {
        var project: String
        var topic: String

        static func < (a: TopicKey, b: TopicKey) -> Bool { (a.topic, a.project) < (b.topic, b.project) }
    }

    struct GroupName: Hashable, Codable, Sendable {
        var senderId: String
        var name: String
    }

    struct GroupRecord: Codable, Sendable {
        var id: Int
        var members: [String]
    }

    /// FCM's limit of topics per app instance (wire reference §6).
    static let topicLimit = 2000

    enum SubscribeResult {
        case created
        case alreadyExists
        case tooManyTopics
    }

    enum RegistrationCheck: Equatable {
        case valid
        case malformed
        /// Uninstalled, or never registered (unless auto-registering): FCM answers NOT_FOUND / UNREGISTERED.
        case notFound
        /// Registered to another project: FCM answers SENDER_ID_MISMATCH (v1) or PERMISSION_DENIED (IID).
        case otherProject
    }

    /// Who asks: the v1 APIs name a project id in the path, the device-group API a sender id (project
    /// number) in a header.
    enum Caller: Sendable {
        case project(String)
        case sender(String)
        /// A caller whose project the emulator cannot tell: every registration is its.
        case any
    }

    let autoRegister: Bool
    private(set) var registrations: [String: RegistrationRecord] = [:]
    /// Sender id (project number) → project id, from the admin API. A sender no project claims is any project's.
    private(set) var senders: [String: String] = [:]
    private(set) var groups: [GroupName: GroupRecord] = [:]
    private var groupNamesByID: [Int: GroupName] = [:]
    private var nextGroupID = 1
    private(set) var dirty = false
    /// Who subscribes to what, kept beside the registrations so the inspector can list a topic's subscribers
    /// (the view FCM never gives) without walking every registration.
    var subscribers: [TopicKey: Set<String>] = [:]
    /// Sorted views for paged listings, rebuilt on the first read after a change (nil: stale).
    var sortedIDs: [String]?
    var sortedTopicKeys: [TopicKey]?
    var sortedSubscribers: [TopicKey: [String]] = [:]

    init(autoRegister: Bool) {
        self.autoRegister = autoRegister
    }

    /// The project a caller acts for, when known.
    func projectID(of caller: Caller) -> String? {
        switch caller {
        case .project(let id): id
        case .sender(let sender): senders[sender]
        case .any: nil
        }
    }

    /// Something saved with the state changed outside the store (the clock): `--state-file` saves again.
    func touch() { dirty = true }

    func link(sender: String, to project: String) {
        senders[sender] = project
        dirty = true
    }

    /// A registration is the caller's when it belongs to the caller's project, or either is unknown.
    func belongs(_ record: RegistrationRecord, to caller: Caller) -> Bool {
        guard let owner = record.project, let project = projectID(of: caller) else { return true }
        return owner == project
    }

    // MARK: Registrations

    static func isWellFormed(_ id: String) -> Bool {
        guard !id.isEmpty, id.utf8.count <= 4096 else { return false }
        // Tokens and FIDs are ASCII: checked on bytes; anything else by Unicode's whitespace property.
        if id.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) { return true }
        return !id.unicodeScalars.contains { $0.properties.isWhitespace || $0.value < 0x20 }
    }

    static func kind(of id: String) -> String {
        let fid =
            id.utf8.count == 22 && "cdef".contains(id.first ?? " ")
            && id.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }
        return fid ? "fid" : "token"
    }

    /// Like FCM, the emulator knows only registrations it was told of (the admin API); `--auto-register`
    /// makes every well-formed one exist, owned by the project of its first use.
    /// Only a mutating request records a first-seen registration, so reads leave the state dump unchanged.
    /// `refusingFIDs`: the legacy APIs take registration tokens; a FID (registered as one, or shaped like one
    /// when unknown) is answered as a string that is no token is, malformed (see `acceptLegacyFIDs`).
    func check(_ id: String, as caller: Caller, recordFirstUse: Bool = true, refusingFIDs: Bool = false) -> RegistrationCheck {
        guard Self.isWellFormed(id) else { return .malformed }
        let known = registrations[id]
        if refusingFIDs, (known?.kind ?? Self.kind(of: id)) == "fid" { return .malformed }
        if let record = known {
            if record.uninstalled { return .notFound }
            return belongs(record, to: caller) ? .valid : .otherProject
        }
        if !autoRegister { return .notFound }
        if recordFirstUse {
            var record = RegistrationRecord(kind: Self.kind(of: id))
            record.project = projectID(of: caller)
            registrations[id] = record
            sortedIDs = nil
            dirty = true
        }
        return .valid
    }

    func register(_ id: String, kind: String, project: String?, platform: String? = nil, app: String? = nil) {
        if registrations[id] == nil { sortedIDs = nil }
        var record = registrations[id] ?? RegistrationRecord(kind: kind)
        record.uninstalled = false
        if let project, record.project != project {
            // A registration moved to another project keeps none of the old project's subscriptions.
            for topic in record.topics.keys { unindex(id, topic, project: record.project) }
            record.topics = [:]
            record.project = project
        }
        if let platform { record.platform = platform }
        if let app { record.app = app }
        registrations[id] = record
        dirty = true
    }

    func record(of id: String) -> RegistrationRecord? { registrations[id] }

    /// The app was uninstalled: its subscriptions vanish and device groups drop it, as FCM does.
    func uninstall(_ id: String) -> Bool {
        guard let record = registrations[id] else { return false }
        for topic in record.topics.keys { unindex(id, topic, project: record.project) }
        registrations[id]?.uninstalled = true
        registrations[id]?.topics = [:]
        dirty = true
        for (name, group) in groups where group.members.contains(id) {
            let remaining = group.members.filter { $0 != id }
            if remaining.isEmpty { deleteGroup(name) } else { groups[name]?.members = remaining }
        }
        return true
    }

    // MARK: Topic subscriptions

    func topics(of id: String) -> [String: Date] { registrations[id]?.topics ?? [:] }

    func subscribe(_ id: String, to topic: String) -> SubscribeResult {
        guard let record = registrations[id] else { return .tooManyTopics }
        if record.topics[topic] != nil { return .alreadyExists }
        if record.topics.count >= Self.topicLimit { return .tooManyTopics }
        registrations[id]?.topics[topic] = Date()
        index(id, topic, project: record.project)
        dirty = true
        return .created
    }

    /// Returns false when there was no such subscription.
    func unsubscribe(_ id: String, from topic: String) -> Bool {
        let removed = registrations[id]?.topics.removeValue(forKey: topic) != nil
        if removed {
            unindex(id, topic, project: registrations[id]?.project)
            dirty = true
        }
        return removed
    }

    private func index(_ id: String, _ topic: String, project: String?) {
        let key = TopicKey(project: project ?? "", topic: topic)
        if subscribers[key] == nil { sortedTopicKeys = nil }
        subscribers[key, default: []].insert(id)
        sortedSubscribers[key] = nil
    }

    private func unindex(_ id: String, _ topic: String, project: String?) {
        let key = TopicKey(project: project ?? "", topic: topic)
        subscribers[key]?.remove(id)
        sortedSubscribers[key] = nil
        if subscribers[key]?.isEmpty == true {
            subscribers[key] = nil
            sortedTopicKeys = nil
        }
    }

    private func rebuildIndex() {
        subscribers = [:]
        for (id, record) in registrations {
            for topic in record.topics.keys { subscribers[TopicKey(project: record.project ?? "", topic: topic), default: []].insert(id) }
        }
        sortedIDs = nil
        sortedTopicKeys = nil
        sortedSubscribers = [:]
    }

    // MARK: Messages

    /// Appends the message to each registration's inbox; returns how many received it.
    func deliver(name: String, message: String, to ids: [String]) -> Int {
        var count = 0
        let now = Date()
        for id in ids where registrations[id]?.uninstalled == false {
            registrations[id]?.inbox.append(InboxMessage(name: name, receivedAt: now, message: message))
            count += 1
        }
        if count > 0 { dirty = true }
        return count
    }

    /// The caller's registrations whose subscriptions satisfy `matches`: topic and condition fan-out.
    func registrations(of caller: Caller, where matches: (Set<String>) -> Bool) -> [String] {
        registrations.filter { !$0.value.uninstalled && belongs($0.value, to: caller) && matches(Set($0.value.topics.keys)) }.map(\.key)
            .sorted()
    }

    func inbox(of id: String) -> [InboxMessage]? { registrations[id]?.inbox }

    // MARK: Device groups

    func group(named name: GroupName) -> GroupRecord? { groups[name] }

    func group(id: Int) -> (GroupName, GroupRecord)? {
        guard let name = groupNamesByID[id], let record = groups[name] else { return nil }
        return (name, record)
    }

    /// The highest group id: the largest integer every JSON reader keeps exact (JavaScript's
    /// Number.MAX_SAFE_INTEGER), so ids in an export read back the same anywhere, and counting up to it
    /// can never overflow.
    static let maximumGroupID = (1 << 53) - 1

    /// nil when every group id is taken (only an imported `next_group_id` near the maximum gets there).
    func createGroup(_ name: GroupName, members: [String]) -> GroupRecord? {
        guard nextGroupID <= Self.maximumGroupID else { return nil }
        dirty = true
        let record = GroupRecord(id: nextGroupID, members: members)
        nextGroupID += 1
        groups[name] = record
        groupNamesByID[record.id] = name
        return record
    }

    func setMembers(_ name: GroupName, _ members: [String]) {
        dirty = true
        if members.isEmpty { deleteGroup(name) } else { groups[name]?.members = members }
    }

    private func deleteGroup(_ name: GroupName) {
        if let id = groups[name]?.id { groupNamesByID[id] = nil }
        groups[name] = nil
    }

    // MARK: Admin

    func reset() {
        registrations = [:]
        groups = [:]
        groupNamesByID = [:]
        rebuildIndex()
        dirty = true
    }

    /// The in-memory form of an export (StateExport.swift writes and reads it); Codable only to read the
    /// version 1 files of `--state-file`, which were this struct encoded with JSONEncoder.
    struct Snapshot: Codable {
        var version = 1
        var senders: [String: String]?
        var registrations: [String: RegistrationRecord]
        var groups: [StoredGroup]
        var nextGroupID: Int
    }

    struct StoredGroup: Codable {
        var name: GroupName
        var record: GroupRecord
    }

    func snapshot() -> Snapshot {
        dirty = false
        return Snapshot(
            senders: senders, registrations: registrations, groups: groups.map { StoredGroup(name: $0.key, record: $0.value) },
            nextGroupID: nextGroupID)
    }

    /// `replacingSenders`: an import replaces the sender links; `--state-file` (always loaded first) merges.
    func restore(_ snapshot: Snapshot, replacingSenders: Bool = false) {
        registrations = snapshot.registrations
        if replacingSenders { senders = [:] }
        senders.merge(snapshot.senders ?? [:]) { _, restored in restored }
        groups = Dictionary(snapshot.groups.map { ($0.name, $0.record) }) { _, last in last }
        groupNamesByID = Dictionary(snapshot.groups.map { ($0.record.id, $0.name) }) { _, last in last }
        // StateExport checked the ids (1 to maximumGroupID) and the next id: neither the + 1 nor a later
        // createGroup can overflow.
        nextGroupID = max(snapshot.nextGroupID, (snapshot.groups.map(\.record.id).max() ?? 0) + 1)
        rebuildIndex()
        // Sorted now, at start or import, rather than by the first page someone opens after it.
        sortedIDs = registrations.keys.sorted()
        sortedTopicKeys = subscribers.keys.sorted()
        dirty = replacingSenders
    }

    var counts: (registrations: Int, subscriptions: Int, groups: Int) {
        (registrations.count, subscribers.values.reduce(0) { $0 + $1.count }, groups.count)
    }

    /// A deterministic dump: sorted, and without the request log, so two dumps compare equal exactly
    /// when FCM's visible state is the same.
    func stateDump() -> EmulatorResponse {
        let groupList: [[String: Any]] = groups.sorted { ($0.key.senderId, $0.key.name) < ($1.key.senderId, $1.key.name) }.map {
            ["sender_id": $0.key.senderId, "name": $0.key.name, "members": $0.value.members.sorted()]
        }
        let registrationList: [[String: Any]] = registrations.sorted { $0.key < $1.key }.map {
            [
                "id": $0.key, "kind": $0.value.kind, "uninstalled": $0.value.uninstalled, "topics": $0.value.topics.keys.sorted(),
                "platform": $0.value.platform, "app": $0.value.app, "inbox_count": $0.value.inbox.count,
                "project": $0.value.project ?? "",
            ]
        }
        return .json(200, ["groups": groupList, "registrations": registrationList])
    }
}
