import Foundation

/// The emulator's export format: everything FCM would remember, in one JSON document that `--import`,
/// `POST /emulator/v1/import` and `--state-file` read back.
///
/// ```json
/// {"format": "fcm-emulator-export", "version": 2, "exported_by": "fcm-emulator 0.1.0 (…)",
///  "clock": {"now": null, "new_project": false},
///  "senders": {"123456789012": "acme"},
///  "registrations": [{"id": "…", "kind": "token", "project": "acme", "platform": "ANDROID", "app": "com.acme",
///                     "uninstalled": false, "topics": {"news": "2026-01-15T01:30:15.010Z"},
///                     "inbox": [{"name": "projects/acme/messages/…", "received_at": "…", "message": {…}}]}],
///  "groups": [{"sender_id": "123456789012", "name": "family", "id": 1, "members": ["…"]}],
///  "next_group_id": 2}
/// ```
///
/// Sorted and keyed by name, so two exports of the same state are byte for byte the same and diff well. A
/// group keeps its internal `id` because every notification key handed out encodes it: keys a client stored
/// before the export still name the group after the import. Not exported: the request log, faults and
/// quotas (settings of a run, not FCM's state) and issued access tokens.
///
/// Versions: 1 is what `--state-file` wrote before this format (the store's `Snapshot`, encoded by
/// JSONEncoder; read, without a clock); 2 is this. A newer version is refused, saying which this build reads.
enum StateExport {
    static let format = "fcm-emulator-export"
    static let version = 2
    /// The file `--import DIR` reads and `--export-on-exit DIR` writes.
    static let fileName = "fcm-emulator-export.json"

    struct Clock: Sendable, Equatable {
        var now: Date?
        var newProject = false
    }

    struct Contents {
        var snapshot: EmulatorStore.Snapshot
        /// nil when the document predates clocks (version 1).
        var clock: Clock?
    }

    struct ReadError: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }

    // MARK: Writing

    static func document(_ snapshot: EmulatorStore.Snapshot, clock: Clock, exportedBy: String) -> Data {
        let registrations: [[String: Any]] = snapshot.registrations.sorted { $0.key < $1.key }.map { id, record in
            var item: [String: Any] = [
                "id": id, "kind": record.kind, "platform": record.platform, "app": record.app, "uninstalled": record.uninstalled,
                "topics": record.topics.mapValues { Timestamp.rfc3339($0) },
                "inbox": record.inbox.map {
                    ["name": $0.name, "received_at": Timestamp.rfc3339($0.receivedAt), "message": RawJSON(text: $0.message)]
                },
            ]
            if let project = record.project { item["project"] = project }
            return item
        }
        let groups: [[String: Any]] = snapshot.groups.sorted { ($0.name.senderId, $0.name.name) < ($1.name.senderId, $1.name.name) }.map {
            ["sender_id": $0.name.senderId, "name": $0.name.name, "id": $0.record.id, "members": $0.record.members]
        }
        let document: [String: Any] = [
            "format": format, "version": version, "exported_by": exportedBy,
            "clock": ["now": clock.now.map(Timestamp.rfc3339) ?? NSNull(), "new_project": clock.newProject],
            "senders": snapshot.senders ?? [:], "registrations": registrations, "groups": groups, "next_group_id": snapshot.nextGroupID,
        ]
        return FastJSON.data(document) + Data("\n".utf8)
    }

    // MARK: Reading

    static func read(_ data: Data) throws(ReadError) -> Contents {
        let object: Any
        do {
            object = try JSONSerialization.jsonObject(with: data)
        } catch {
            // The parser's own words say where: "Too many nested arrays or dictionaries around character 513."
            let detail = (error as NSError).userInfo["NSDebugDescription"] as? String
            throw ReadError("not JSON\(detail.map { " (\($0))" } ?? ""): not an fcm-emulator export")
        }
        guard let top = object as? [String: Any] else {
            throw ReadError("not JSON with an object at the top (\(F.describe(object))): not an fcm-emulator export")
        }
        if top["format"] as? String == format {
            guard let raw = top["version"] else { throw ReadError("no format version: not an fcm-emulator export") }
            guard let number = raw as? NSNumber, !F.isBoolean(number), let version = number as? Int else {
                throw ReadError("version: \(F.describe(raw)), expected a format version (1 to \(Self.version))")
            }
            guard version <= Self.version else {
                throw ReadError(
                    "written by a newer fcm-emulator (format version \(version)); this one reads versions 1 to \(Self.version): upgrade fcm-emulator")
            }
            guard version == 2 else {
                throw ReadError("format version \(version) never existed; this fcm-emulator reads versions 1 to \(Self.version)")
            }
            return try readVersion2(top)
        }
        if top["version"] as? Int == 1, top["registrations"] is [String: Any] {
            let decoder = JSONDecoder()
            decoder.dateDecodingStrategy = .iso8601
            do {
                let snapshot = try decoder.decode(EmulatorStore.Snapshot.self, from: data)
                try checkVersion1(snapshot)
                return Contents(snapshot: snapshot, clock: nil)
            } catch let error as ReadError {
                throw ReadError("a version 1 state file: \(error)")
            } catch {
                throw ReadError("a version 1 state file that cannot be read: \(error)")
            }
        }
        if let registrations = top["registrations"] as? [[String: Any]], registrations.first?["inbox_count"] != nil || top["format"] == nil,
            top["groups"] is [Any]
        {
            throw ReadError(
                "this is the dump of GET /emulator/v1/state, which leaves out inboxes, subscription times, sender links and group ids; "
                    + "export with GET /emulator/v1/export (or --export-on-exit) to get a file that loads back")
        }
        throw ReadError("no \"format\": \"\(format)\" field: not an fcm-emulator export")
    }

    typealias F = ExportFields

    static let topFields: Set<String> = ["format", "version", "exported_by", "clock", "senders", "registrations", "groups", "next_group_id"]
    static let registrationFields: Set<String> = ["id", "kind", "project", "platform", "app", "uninstalled", "topics", "inbox"]
    static let messageFields: Set<String> = ["name", "received_at", "message"]
    static let groupFields: Set<String> = ["sender_id", "name", "id", "members"]

    /// Every field is checked against the format: its type, its range, FCM's limits (20 members, 2,000 topics,
    /// the topic pattern) and what the other fields say (a member is a registration of the export). A field
    /// that is absent takes its default; one that is there with another type is refused, never read as empty.
    private static func readVersion2(_ top: [String: Any]) throws(ReadError) -> Contents {
        _ = try F.object(top, at: "", fields: topFields)
        if let by = top["exported_by"] { _ = try F.string(by, at: "exported_by") }
        var snapshot = EmulatorStore.Snapshot(senders: [:], registrations: [:], groups: [], nextGroupID: 1)
        var senders: [String: String] = [:]
        for (sender, project) in try F.map(top["senders"] ?? [String: Any](), at: "senders").sorted(by: { $0.key < $1.key }) {
            let path = F.at("senders", key: sender)
            guard !sender.isEmpty else { throw ReadError("\(path): an empty sender id") }
            senders[sender] = try F.string(project, at: path, nonEmpty: true)
        }
        snapshot.senders = senders
        for (index, value) in try F.array(top["registrations"] ?? [Any](), at: "registrations").enumerated() {
            let (id, record) = try registration(value, at: "registrations[\(index)]")
            guard snapshot.registrations.updateValue(record, forKey: id) == nil else {
                throw ReadError("registrations[\(index)].id: \(Quoted.text(id)) appears twice")
            }
        }
        for (index, value) in try F.array(top["groups"] ?? [Any](), at: "groups").enumerated() {
            let at = "groups[\(index)]"
            let item = try F.object(value, at: at, fields: groupFields)
            func field(_ name: String) throws(ReadError) -> Any {
                guard let value = item[name] else {
                    throw ReadError("\(at): no \"\(name)\"; a group has \(groupFields.sorted().joined(separator: ", "))")
                }
                return value
            }
            let sender = try F.string(try field("sender_id"), at: "\(at).sender_id", nonEmpty: true)
            let name = try F.string(try field("name"), at: "\(at).name", nonEmpty: true)
            let id = try F.integer(try field("id"), at: "\(at).id", in: 1...EmulatorStore.maximumGroupID)
            let members = try F.array(try field("members"), at: "\(at).members").enumerated().map { number, member throws(ReadError) in
                try F.string(member, at: "\(at).members[\(number)]")
            }
            snapshot.groups.append(.init(name: .init(senderId: sender, name: name), record: .init(id: id, members: members)))
        }
        if let next = top["next_group_id"] {
            snapshot.nextGroupID = try F.integer(next, at: "next_group_id", in: 1...(EmulatorStore.maximumGroupID + 1))
        } else {
            snapshot.nextGroupID = (snapshot.groups.map(\.record.id).max() ?? 0) + 1
        }
        try checkGroups(snapshot, at: { "groups[\($0)]" }, fields: ("id", "members", "next_group_id"))
        var clock = Clock()
        if let value = top["clock"] {
            let saved = try F.object(value, at: "clock", fields: ["now", "new_project"])
            if let now = saved["now"], !(now is NSNull) { clock.now = try F.time(now, at: "clock.now") }
            if let flag = saved["new_project"] { clock.newProject = try F.bool(flag, at: "clock.new_project") }
        }
        return Contents(snapshot: snapshot, clock: clock)
    }

    private static func registration(_ value: Any, at path: String) throws(ReadError) -> (String, EmulatorStore.RegistrationRecord) {
        let item = try F.object(value, at: path, fields: registrationFields)
        guard let idValue = item["id"] else { throw ReadError("\(path): no \"id\"") }
        let id = try F.string(idValue, at: "\(path).id")
        try checkID(id, at: "\(path).id")
        var record = EmulatorStore.RegistrationRecord(kind: EmulatorStore.kind(of: id))
        if let kind = item["kind"] { record.kind = try checkKind(try F.string(kind, at: "\(path).kind"), at: "\(path).kind") }
        if let project = item["project"] {
            let text = try F.string(project, at: "\(path).project")
            record.project = text.isEmpty ? nil : text
        }
        if let platform = item["platform"] { record.platform = try F.string(platform, at: "\(path).platform") }
        if let app = item["app"] { record.app = try F.string(app, at: "\(path).app") }
        if let uninstalled = item["uninstalled"] { record.uninstalled = try F.bool(uninstalled, at: "\(path).uninstalled") }
        if let value = item["topics"] {
            let topics = try F.map(value, at: "\(path).topics")
            try checkTopics(topics.keys, at: "\(path).topics")
            for (topic, created) in topics {
                record.topics[topic] = try F.time(created, at: F.at("\(path).topics", key: topic))
            }
        }
        if let inbox = item["inbox"] {
            for (number, value) in try F.array(inbox, at: "\(path).inbox").enumerated() {
                let at = "\(path).inbox[\(number)]"
                let message = try F.object(value, at: at, fields: messageFields)
                guard let name = message["name"], let received = message["received_at"], let body = message["message"] else {
                    throw ReadError("\(at): needs name, received_at (RFC 3339) and message")
                }
                // An object, checked before JSONSerialization writes it: given a string or a number it traps.
                let object = try F.map(body, at: "\(at).message")
                guard let json = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]) else {
                    throw ReadError("\(at).message: cannot be written back as JSON")
                }
                record.inbox.append(
                    .init(
                        name: try F.string(name, at: "\(at).name"), receivedAt: try F.time(received, at: "\(at).received_at"),
                        message: String(decoding: json, as: UTF8.self)))
            }
        }
        return (id, record)
    }

    // MARK: Rules both versions follow

    static func checkID(_ id: String, at path: String) throws(ReadError) {
        guard EmulatorStore.isWellFormed(id) else {
            throw ReadError("\(path): \(Quoted.text(id)) is not a registration (1 to 4,096 bytes, no whitespace or control characters)")
        }
    }

    static func checkKind(_ kind: String, at path: String) throws(ReadError) -> String {
        guard kind == "token" || kind == "fid" else { throw ReadError("\(path): \(Quoted.text(kind)), expected \"token\" or \"fid\"") }
        return kind
    }

    static func checkTopics(_ topics: some Collection<String>, at path: String) throws(ReadError) {
        guard topics.count <= EmulatorStore.topicLimit else {
            throw ReadError("\(path): \(topics.count) topics, FCM allows at most \(EmulatorStore.topicLimit) per app instance")
        }
        if topics.contains(where: { !TopicSubscriptionRoutes.isValidTopic($0) }),
            let bad = topics.sorted().first(where: { !TopicSubscriptionRoutes.isValidTopic($0) })
        {
            throw ReadError("\(F.at(path, key: bad)): not a topic name; FCM's topic names are 1 to 900 of [a-zA-Z0-9-_.~%]")
        }
    }

    /// Groups as FCM keeps them: 1 to 20 members, each a registration of the export that is installed, none
    /// twice; one group per sender and name; ids unique and below the next id the emulator hands out.
    static func checkGroups(
        _ snapshot: EmulatorStore.Snapshot, at path: (Int) -> String, fields: (id: String, members: String, next: String)
    ) throws(ReadError) {
        let (idField, membersField, nextField) = fields
        var ids: [Int: Int] = [:]
        var names: [EmulatorStore.GroupName: Int] = [:]
        for (index, group) in snapshot.groups.enumerated() {
            let at = path(index)
            guard (1...EmulatorStore.maximumGroupID).contains(group.record.id) else {
                throw ReadError(
                    "\(at).\(idField): \(group.record.id) is out of range, expected a whole number from 1 to \(EmulatorStore.maximumGroupID)")
            }
            let members = group.record.members
            guard !members.isEmpty else {
                throw ReadError(
                    "\(at).\(membersField): empty; a group has 1 to \(DeviceGroupRoutes.memberLimit) members (FCM deletes it with its last)")
            }
            guard members.count <= DeviceGroupRoutes.memberLimit else {
                throw ReadError("\(at).\(membersField): \(members.count) members, FCM allows at most \(DeviceGroupRoutes.memberLimit)")
            }
            var seen = Set<String>()
            for (number, member) in members.enumerated() {
                let memberPath = "\(at).\(membersField)[\(number)]"
                guard let record = snapshot.registrations[member] else {
                    throw ReadError("\(memberPath): \(Quoted.text(member)) is not a registration of this export; a group's members are registrations")
                }
                guard !record.uninstalled else {
                    throw ReadError("\(memberPath): \(Quoted.text(member)) is uninstalled; FCM drops those from groups")
                }
                guard seen.insert(member).inserted else { throw ReadError("\(memberPath): \(Quoted.text(member)) is a member twice") }
            }
            if let first = ids.updateValue(index, forKey: group.record.id) {
                throw ReadError("\(at).\(idField): \(group.record.id) is also the id of \(path(first)); every group has its own")
            }
            if let first = names.updateValue(index, forKey: group.name) {
                throw ReadError(
                    "\(at): sender \(Quoted.text(group.name.senderId)) has a group named \(Quoted.text(group.name.name)) already (\(path(first)))")
            }
        }
        guard (1...(EmulatorStore.maximumGroupID + 1)).contains(snapshot.nextGroupID) else {
            throw ReadError(
                "\(nextField): \(snapshot.nextGroupID) is out of range, expected a whole number from 1 to \(EmulatorStore.maximumGroupID + 1)")
        }
        if let (highest, index) = ids.max(by: { $0.key < $1.key }), highest >= snapshot.nextGroupID {
            throw ReadError(
                "\(nextField): \(snapshot.nextGroupID), but \(path(index)).\(idField) is \(highest): the next id must be above every group's")
        }
    }

    /// A version 1 file, decoded by JSONDecoder (so every type is right), held to the same rules.
    static func checkVersion1(_ snapshot: EmulatorStore.Snapshot) throws(ReadError) {
        for (id, record) in snapshot.registrations.sorted(by: { $0.key < $1.key }) {
            let at = F.at("registrations", key: id)
            try checkID(id, at: at)
            _ = try checkKind(record.kind, at: "\(at).kind")
            try checkTopics(record.topics.keys, at: "\(at).topics")
            for (number, message) in record.inbox.enumerated() {
                guard (try? JSONSerialization.jsonObject(with: Data(message.message.utf8))) is [String: Any] else {
                    throw ReadError("\(at).inbox[\(number)].message: not the text of a JSON object")
                }
            }
        }
        for (sender, project) in snapshot.senders ?? [:] where sender.isEmpty || project.isEmpty {
            throw ReadError("\(F.at("senders", key: sender)): sender ids and projects are non-empty")
        }
        try checkGroups(snapshot, at: { "groups[\($0)]" }, fields: ("record.id", "record.members", "nextGroupID"))
    }
}
