import Foundation

/// `POST /v1/projects/{p}/messages:send` (wire reference §4): validates like FCM, delivers into the
/// target registrations' inboxes (readable through the admin API), and answers with a message name.
struct MessageRoutes {
    let store: EmulatorStore

    static let payloadLimit = 4096
    static let topicPayloadLimit = 2048
    static let maximumTTLSeconds = 2_419_200
    static let reservedDataKeys: Set<String> = ["from", "message_type"]
    static let reservedDataPrefixes = ["google.", "gcm.notification."]

    func handle(_ request: EmulatorRequest) async -> EmulatorResponse? {
        let s = request.segments
        guard request.method == "POST", s.count == 4, s[0] == "v1", s[1] == "projects", s[3] == "messages:send" else { return nil }
        return await send(project: s[2], request)
    }

    /// FCM's answer for a registration of another project (wire reference §5: SENDER_ID_MISMATCH, 403).
    static let senderMismatch = EmulatorResponse.rpcError(403, "SenderId mismatch", fcmErrorCode: "SENDER_ID_MISMATCH")

    static func invalid(_ message: String) -> EmulatorResponse {
        .rpcError(400, message, fcmErrorCode: "INVALID_ARGUMENT")
    }

    enum Target {
        case registration(String)
        case topic(String)
        case condition(TopicCondition)
    }

    func send(project: String, _ request: EmulatorRequest) async -> EmulatorResponse {
        guard let body = request.jsonObject, let message = body["message"] as? [String: Any] else {
            return Self.invalid("Invalid JSON payload received. The request needs a 'message' object.")
        }
        let validateOnly = (body["validate_only"] ?? body["validateOnly"]) as? Bool ?? false
        let target: Target
        switch Self.target(of: message) {
        case .failure(let problem): return problem
        case .success(let found): target = found
        }
        if let problem = Self.validate(message, toTopic: { if case .registration = target { return false } else { return true } }()) {
            return problem
        }
        let recipients: [String]
        switch target {
        case .registration(let id):
            if let groupID = NotificationKeyCodec.decode(id) {
                guard let (groupName, group) = await store.group(id: groupID) else {
                    return .rpcError(404, "Requested entity was not found.", fcmErrorCode: "UNREGISTERED")
                }
                if let owner = await store.projectID(of: .sender(groupName.senderId)), owner != project { return Self.senderMismatch }
                recipients = group.members
            } else {
                switch await store.check(id, as: .project(project), recordFirstUse: !validateOnly) {
                case .malformed: return Self.invalid("The registration token is not a valid FCM registration token")
                case .notFound: return .rpcError(404, "Requested entity was not found.", fcmErrorCode: "UNREGISTERED")
                case .otherProject: return Self.senderMismatch
                case .valid: recipients = [id]
                }
            }
        case .topic(let name):
            recipients = await store.registrations(of: .project(project)) { $0.contains(name) }
        case .condition(let condition):
            recipients = await store.registrations(of: .project(project)) { condition.matches($0) }
        }
        if validateOnly { return .json(200, ["name": "projects/\(project)/messages/fake_message_id"]) }
        let name = "projects/\(project)/messages/0:\(Int(Date().timeIntervalSince1970 * 1000))%\(UUID().uuidString.prefix(8).lowercased())"
        let text = String(decoding: (try? JSONSerialization.data(withJSONObject: message, options: [.sortedKeys])) ?? Data(), as: UTF8.self)
        _ = await store.deliver(name: name, message: text, to: recipients)
        return .json(200, ["name": name])
    }

    /// Exactly one of token, fid, topic, condition.
    static func target(of message: [String: Any]) -> Result<Target, EmulatorResponse> {
        let present = ["token", "fid", "topic", "condition"].filter { message[$0] != nil }
        guard present.count == 1, let value = message[present[0]] as? String, !value.isEmpty else {
            return .failure(
                invalid(
                    "Exactly one of token, fid, topic or condition must be specified; found \(present.isEmpty ? "none" : present.joined(separator: ", "))"
                ))
        }
        switch present[0] {
        case "topic":
            if value.hasPrefix("/topics/") { return .failure(invalid("Invalid topic name: the \"/topics/\" prefix should not be provided")) }
            guard TopicSubscriptionRoutes.isValidTopic(value) else { return .failure(invalid("Invalid topic name '\(value)'")) }
            return .success(.topic(value))
        case "condition":
            do {
                return .success(.condition(try TopicCondition.parse(value)))
            } catch let error as TopicCondition.ParseError {
                return .failure(invalid("Invalid condition: \(error.message)"))
            } catch {
                return .failure(invalid("Invalid condition"))
            }
        default:
            return .success(.registration(value))
        }
    }

    static func validate(_ message: [String: Any], toTopic: Bool) -> EmulatorResponse? {
        var payloadBytes = 0
        if let data = message["data"] {
            guard let map = data as? [String: Any] else { return invalid("message.data must be a map of strings") }
            for (key, value) in map {
                guard let text = value as? String else {
                    return invalid("Invalid value at 'message.data[\(key)].value' (TYPE_STRING)")
                }
                if reservedDataKeys.contains(key) || reservedDataPrefixes.contains(where: key.hasPrefix) {
                    return invalid(
                        "Invalid data key '\(key)': 'from', 'message_type' and keys starting with 'google.' or 'gcm.notification.' are reserved")
                }
                payloadBytes += key.utf8.count + text.utf8.count
            }
        }
        if let notification = message["notification"] as? [String: Any] {
            for key in ["title", "body"] { payloadBytes += (notification[key] as? String)?.utf8.count ?? 0 }
        }
        let limit = toTopic ? topicPayloadLimit : payloadLimit
        if payloadBytes > limit {
            return .rpcError(400, "Message payload too big: \(payloadBytes) bytes; the limit is \(limit)", fcmErrorCode: "INVALID_ARGUMENT")
        }
        for (path, value) in imageFields(message) {
            guard let url = URL(string: value), let scheme = url.scheme?.lowercased(), ["http", "https"].contains(scheme), url.host != nil else {
                return invalid("Invalid image URL at '\(path)': '\(value)'")
            }
        }
        if let android = message["android"] as? [String: Any], let ttl = android["ttl"] {
            guard let text = ttl as? String, text.hasSuffix("s"), let seconds = Double(text.dropLast()),
                (0...Double(maximumTTLSeconds)).contains(seconds)
            else { return invalid("Invalid android.ttl '\(ttl)': a duration such as \"3600s\", at most \(maximumTTLSeconds)s") }
        }
        return nil
    }

    /// Every platform's image field (send-image docs): notification, android, apns and webpush.
    static func imageFields(_ message: [String: Any]) -> [(String, String)] {
        var fields: [(String, String)] = []
        if let image = (message["notification"] as? [String: Any])?["image"] as? String { fields.append(("message.notification.image", image)) }
        if let image = ((message["android"] as? [String: Any])?["notification"] as? [String: Any])?["image"] as? String {
            fields.append(("message.android.notification.image", image))
        }
        if let image = ((message["apns"] as? [String: Any])?["fcm_options"] as? [String: Any])?["image"] as? String {
            fields.append(("message.apns.fcm_options.image", image))
        }
        if let image = ((message["webpush"] as? [String: Any])?["headers"] as? [String: Any])?["image"] as? String {
            fields.append(("message.webpush.headers.image", image))
        }
        return fields
    }
}
