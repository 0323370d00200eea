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
        if let problem = Self.validate(request.body) { return problem }
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

    /// The body against Google's discovery document and FCM's documented rules (Contract/), before anything
    /// else looks at it, as Google's JSON front end parses a request before FCM sees it.
    static func validate(_ body: Data) -> EmulatorResponse? {
        let violations = SendContract.violations(of: body)
        return violations.isEmpty ? nil : SendContract.response(violations)
    }
}
