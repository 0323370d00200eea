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
        guard let object = try? JSONSerialization.jsonObject(with: data), let top = object as? [String: Any] else {
            throw ReadError("not JSON with an object at the top: not an fcm-emulator export")
        }
        if top["format"] as? String == format {
            guard let version = top["version"] as? Int else { throw ReadError("no format version: not an fcm-emulator export") }
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
                return Contents(snapshot: try decoder.decode(EmulatorStore.Snapshot.self, from: data), clock: nil)
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

    private static func readVersion2(_ top: [String: Any]) throws(ReadError) -> Contents {
        var snapshot = EmulatorStore.Snapshot(senders: [:], registrations: [:], groups: [], nextGroupID: 1)
        guard let senders = (top["senders"] ?? [String: Any]()) as? [String: String] else { throw ReadError("senders: not an object of strings") }
        snapshot.senders = senders
        for (index, item) in ((top["registrations"] as? [[String: Any]]) ?? []).enumerated() {
            let at = "registrations[\(index)]"
            guard let id = item["id"] as? String, EmulatorStore.isWellFormed(id) else { throw ReadError("\(at): no well-formed \"id\"") }
            var record = EmulatorStore.RegistrationRecord(kind: item["kind"] as? String ?? EmulatorStore.kind(of: id))
            record.project = (item["project"] as? String).flatMap { $0.isEmpty ? nil : $0 }
            record.platform = item["platform"] as? String ?? record.platform
            record.app = item["app"] as? String ?? record.app
            record.uninstalled = item["uninstalled"] as? Bool ?? false
            for (topic, value) in (item["topics"] as? [String: Any]) ?? [:] {
                guard let text = value as? String, let created = Timestamp.parse(text) else {
                    throw ReadError("\(at).topics.\(topic): not an RFC 3339 time")
                }
                record.topics[topic] = created
            }
            for (number, message) in ((item["inbox"] as? [[String: Any]]) ?? []).enumerated() {
                guard let name = message["name"] as? String, let text = message["received_at"] as? String, let received = Timestamp.parse(text),
                    let body = message["message"], let json = try? JSONSerialization.data(withJSONObject: body, options: [.sortedKeys])
                else { throw ReadError("\(at).inbox[\(number)]: needs name, received_at (RFC 3339) and message") }
                record.inbox.append(.init(name: name, receivedAt: received, message: String(decoding: json, as: UTF8.self)))
            }
            guard snapshot.registrations.updateValue(record, forKey: id) == nil else { throw ReadError("\(at): \(id) appears twice") }
        }
        var ids = Set<Int>()
        for (index, item) in ((top["groups"] as? [[String: Any]]) ?? []).enumerated() {
            guard let sender = item["sender_id"] as? String, let name = item["name"] as? String, let id = item["id"] as? Int,
                let members = item["members"] as? [String], !members.isEmpty
            else { throw ReadError("groups[\(index)]: needs sender_id, name, id and a non-empty members list") }
            guard ids.insert(id).inserted else { throw ReadError("groups[\(index)]: id \(id) is used twice") }
            snapshot.groups.append(.init(name: .init(senderId: sender, name: name), record: .init(id: id, members: members)))
        }
        snapshot.nextGroupID = max(top["next_group_id"] as? Int ?? 1, (ids.max() ?? 0) + 1)
        var clock = Clock()
        if let saved = top["clock"] as? [String: Any] {
            if let text = saved["now"] as? String {
                guard let now = Timestamp.parse(text) else { throw ReadError("clock.now: not an RFC 3339 time") }
                clock.now = now
            }
            clock.newProject = saved["new_project"] as? Bool ?? false
        }
        return Contents(snapshot: snapshot, clock: clock)
    }
}
