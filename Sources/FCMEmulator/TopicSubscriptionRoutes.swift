import Foundation

/// The v1 Topic Subscription API: `/v1/projects/{p}/registrations/{r}/topicSubscriptions` (wire reference §1B).
struct TopicSubscriptionRoutes {
    let store: EmulatorStore
    /// Field casing is [UNCERTAIN] (wire reference §1B): Firebase's pages show snake_case, but Google's JSON
    /// mapping of protos (proto3 JSON, the discovery documents, every generated client) is lowerCamelCase, so
    /// that is the default and `--snake-case-fields` brings back the pages' spelling.
    let snakeCaseFields: Bool

    static let defaultPageSize = 1000
    static let maximumPageSize = 2000

    func handle(_ request: EmulatorRequest) async -> EmulatorResponse? {
        let s = request.segments
        guard s.count >= 5, s[0] == "v1", s[1] == "projects", s[3] == "registrations", s[5...].first == "topicSubscriptions"
        else { return nil }
        let project = s[2]
        let registration = s[4]
        switch (request.method, s.count) {
        case ("GET", 6): return await list(project: project, registration: registration, request: request)
        case ("POST", 6):
            guard let topic = request.query("topicName", "topic_name") else {
                return .rpcError(400, "topicName is required", fcmErrorCode: "INVALID_ARGUMENT")
            }
            return await create(project: project, registration: registration, topic: topic)
        case ("GET", 7): return await get(project: project, registration: registration, topic: s[6])
        case ("PATCH", 7):
            let allowMissing = request.query("allowMissing", "allow_missing") == "true"
            return await patch(project: project, registration: registration, topic: s[6], allowMissing: allowMissing)
        case ("DELETE", 7):
            let allowMissing = request.query("allowMissing", "allow_missing") == "true"
            return await delete(project: project, registration: registration, topic: s[6], allowMissing: allowMissing)
        default: return nil
        }
    }

    static func isValidTopic(_ topic: String) -> Bool {
        (1...900).contains(topic.utf8.count)
            && topic.utf8.allSatisfy { byte in
                (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                    || [UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: "~"), UInt8(ascii: "%")].contains(byte)
            }
    }

    /// Answers for a registration FCM would not accept, or nil when it is fine.
    func registrationProblem(_ registration: String, project: String, mutating: Bool = false) async -> EmulatorResponse? {
        switch await store.check(registration, as: .project(project), recordFirstUse: mutating) {
        case .valid: return nil
        case .malformed: return .rpcError(400, "The registration is not a valid FCM registration token or FID", fcmErrorCode: "INVALID_ARGUMENT")
        case .notFound: return .rpcError(404, "Requested entity was not found.", fcmErrorCode: "UNREGISTERED")
        // [GUESS] no source records the v1 topic API's answer for another project's registration; messages:send's is used.
        case .otherProject: return MessageRoutes.senderMismatch
        }
    }

    func resource(project: String, registration: String, topic: String, created: Date) -> [String: Any] {
        return [
            "name": "projects/\(project)/registrations/\(registration)/topicSubscriptions/\(topic)",
            snakeCaseFields ? "topic_name" : "topicName": topic,
            snakeCaseFields ? "create_time" : "createTime": Timestamp.rfc3339(created),
        ]
    }

    func create(project: String, registration: String, topic: String) async -> EmulatorResponse {
        guard Self.isValidTopic(topic) else { return .rpcError(400, "Topic name format is invalid", fcmErrorCode: "INVALID_ARGUMENT") }
        if let problem = await registrationProblem(registration, project: project, mutating: true) { return problem }
        switch await store.subscribe(registration, to: topic) {
        case .created: break
        case .alreadyExists: return .rpcError(409, "Topic subscription already exists")
        case .tooManyTopics: return Self.tooManyTopics
        }
        let created = await store.topics(of: registration)[topic] ?? Date()
        return .json(200, resource(project: project, registration: registration, topic: topic, created: created))
    }

    /// [UNCERTAIN] FCM's v1 answer for a 2001st topic is unrecorded; the IID API calls it TOO_MANY_TOPICS.
    static let tooManyTopics = EmulatorResponse.rpcError(
        400, "TOO_MANY_TOPICS: a registration can be subscribed to at most \(EmulatorStore.topicLimit) topics", fcmErrorCode: "INVALID_ARGUMENT")

    /// Upsert: with allowMissing a missing subscription is created; without it, a missing one is NOT_FOUND.
    func patch(project: String, registration: String, topic: String, allowMissing: Bool) async -> EmulatorResponse {
        guard Self.isValidTopic(topic) else { return .rpcError(400, "Topic name format is invalid", fcmErrorCode: "INVALID_ARGUMENT") }
        if let problem = await registrationProblem(registration, project: project, mutating: allowMissing) { return problem }
        if await store.topics(of: registration)[topic] == nil {
            guard allowMissing else { return .rpcError(404, "Requested entity was not found.") }
            if case .tooManyTopics = await store.subscribe(registration, to: topic) { return Self.tooManyTopics }
        }
        let created = await store.topics(of: registration)[topic] ?? Date()
        return .json(200, resource(project: project, registration: registration, topic: topic, created: created))
    }

    func get(project: String, registration: String, topic: String) async -> EmulatorResponse {
        if let problem = await registrationProblem(registration, project: project) { return problem }
        guard let created = await store.topics(of: registration)[topic] else {
            return .rpcError(404, "Requested entity was not found.")
        }
        return .json(200, resource(project: project, registration: registration, topic: topic, created: created))
    }

    func list(project: String, registration: String, request: EmulatorRequest) async -> EmulatorResponse {
        if let problem = await registrationProblem(registration, project: project) { return problem }
        var pageSize = Int(request.query("pageSize", "page_size") ?? "") ?? Self.defaultPageSize
        if pageSize <= 0 { pageSize = Self.defaultPageSize }
        pageSize = min(pageSize, Self.maximumPageSize)  // larger values are coerced, not refused
        let topics = await store.topics(of: registration).sorted { $0.key < $1.key }
        // The page token is the last topic of the previous page: stable under concurrent changes.
        let after = request.query("pageToken", "page_token").flatMap { $0.isEmpty ? nil : $0 }
        let remaining = after.map { token in topics.filter { $0.key > token } } ?? topics
        let page = remaining.prefix(pageSize)
        var body: [String: Any] = [
            snakeCaseFields ? "topic_subscriptions" : "topicSubscriptions":
                page.map { resource(project: project, registration: registration, topic: $0.key, created: $0.value) }
        ]
        if remaining.count > page.count, let last = page.last {
            body[snakeCaseFields ? "next_page_token" : "nextPageToken"] = last.key
        }
        return .json(200, body)
    }

    func delete(project: String, registration: String, topic: String, allowMissing: Bool) async -> EmulatorResponse {
        if let problem = await registrationProblem(registration, project: project) { return problem }
        if await store.unsubscribe(registration, from: topic) || allowMissing { return .json(200, [String: Any]()) }
        return .rpcError(404, "Requested entity was not found.")
    }
}
