import Foundation

/// The admin API's paged listings, what the inspector page reads and scripts can read too:
/// `GET /emulator/v1/registrations[/ID]`, `topics`, `topics/NAME/subscribers` and `groups`. Every list takes
/// `page_size` (default 50, at most 1000) and `page_token` (the `next_page_token` of the page before).
struct AdminListingRoutes {
    let store: EmulatorStore

    func handle(_ request: EmulatorRequest, path: [String]) async -> EmulatorResponse? {
        guard request.method == "GET" else { return nil }
        switch path {
        case ["registrations"]: return await registrations(request)
        case let p where p.count == 2 && p[0] == "registrations": return await registration(p[1])
        case ["topics"]: return await topics(request)
        case let p where p.count == 3 && p[0] == "topics" && p[2] == "subscribers": return await subscribers(request, topic: p[1])
        case ["groups"]: return await groups(request)
        default: return nil
        }
    }

    static func pageSize(_ request: EmulatorRequest) -> Result<Int, EmulatorResponse> {
        guard let text = request.query("pageSize", "page_size"), !text.isEmpty else { return .success(EmulatorStore.defaultPageSize) }
        guard let size = Int(text), size > 0 else { return .failure(.rpcError(400, "page_size must be a positive number")) }
        return .success(min(size, EmulatorStore.maximumPageSize))
    }

    static func pageToken(_ request: EmulatorRequest) -> Result<String?, EmulatorResponse> {
        guard let token = request.query("pageToken", "page_token"), !token.isEmpty else { return .success(nil) }
        guard PageToken.decode(token) != nil else { return .failure(.rpcError(400, "page_token is not one this emulator gave out")) }
        return .success(token)
    }

    static func nonEmpty(_ text: String?) -> String? { text.flatMap { $0.isEmpty ? nil : $0 } }

    func registrations(_ request: EmulatorRequest) async -> EmulatorResponse {
        let size: Int
        let token: String?
        switch (Self.pageSize(request), Self.pageToken(request)) {
        case (.failure(let problem), _), (_, .failure(let problem)): return problem
        case (.success(let s), .success(let t)): (size, token) = (s, t)
        }
        let query = RegistrationQuery(request.query["q"] ?? "", project: Self.nonEmpty(request.query["project"]))
        let page = await store.registrationPage(matching: query, after: token, size: size)
        var body: [String: Any] = [
            "registrations": page.items.map { Self.summary($0.0, $0.1) }, "total": await store.registrationCount,
        ]
        if let next = page.next { body["next_page_token"] = next }
        return .json(200, body)
    }

    /// At most this many topic names ride along in a listing row; the detail has them all.
    static let topicsInSummary = 10

    static func summary(_ id: String, _ record: EmulatorStore.RegistrationRecord) -> [String: Any] {
        let topics = record.topics.count <= topicsInSummary ? record.topics.keys.sorted() : Array(record.topics.keys.sorted().prefix(topicsInSummary))
        return [
            "id": id, "kind": record.kind, "platform": record.platform, "app": record.app, "project": record.project ?? "",
            "uninstalled": record.uninstalled, "topic_count": record.topics.count, "topics": topics, "inbox_count": record.inbox.count,
        ]
    }

    func registration(_ id: String) async -> EmulatorResponse {
        guard let record = await store.record(of: id) else { return .rpcError(404, "no such registration: register it first") }
        var body = Self.summary(id, record)
        body["topics"] = record.topics.sorted { $0.key < $1.key }.map { ["name": $0.key, "create_time": Timestamp.rfc3339($0.value)] }
        body["groups"] = await store.groups(containing: id).map { ["sender_id": $0.senderId, "name": $0.name] }
        return .json(200, body)
    }

    func topics(_ request: EmulatorRequest) async -> EmulatorResponse {
        let size: Int
        let token: String?
        switch (Self.pageSize(request), Self.pageToken(request)) {
        case (.failure(let problem), _), (_, .failure(let problem)): return problem
        case (.success(let s), .success(let t)): (size, token) = (s, t)
        }
        let page = await store.topicPage(
            containing: request.query["q"] ?? "", project: Self.nonEmpty(request.query["project"]), after: token, size: size)
        var body: [String: Any] = [
            "topics": page.items.map { ["name": $0.0.topic, "project": $0.0.project, "subscribers": $0.1] },
            "total": await store.topicCount,
        ]
        if let next = page.next { body["next_page_token"] = next }
        return .json(200, body)
    }

    func subscribers(_ request: EmulatorRequest, topic: String) async -> EmulatorResponse {
        let size: Int
        let token: String?
        switch (Self.pageSize(request), Self.pageToken(request)) {
        case (.failure(let problem), _), (_, .failure(let problem)): return problem
        case (.success(let s), .success(let t)): (size, token) = (s, t)
        }
        let project = request.query["project"]
        let (page, total) = await store.subscriberPage(topic: topic, project: project, after: token, size: size)
        var body: [String: Any] = [
            "topic": topic, "total": total,
            "subscribers": page.items.map { id, record in
                [
                    "id": id, "kind": record.kind, "platform": record.platform, "app": record.app, "project": record.project ?? "",
                    "create_time": record.topics[topic].map(Timestamp.rfc3339) ?? "",
                ]
            },
        ]
        if let project { body["project"] = project }
        if let next = page.next { body["next_page_token"] = next }
        return .json(200, body)
    }

    func groups(_ request: EmulatorRequest) async -> EmulatorResponse {
        let size: Int
        let token: String?
        switch (Self.pageSize(request), Self.pageToken(request)) {
        case (.failure(let problem), _), (_, .failure(let problem)): return problem
        case (.success(let s), .success(let t)): (size, token) = (s, t)
        }
        let page = await store.groupPage(containing: request.query["q"] ?? "", after: token, size: size)
        var items: [[String: Any]] = []
        for (name, record) in page.items {
            items.append([
                "sender_id": name.senderId, "name": name.name, "project": await store.projectID(of: .sender(name.senderId)) ?? "",
                "members": record.members,
                // A key as FCM gives one: a different valid key on every read (NotificationKeyCodec).
                "notification_key": NotificationKeyCodec.encode(groupID: record.id),
            ])
        }
        var body: [String: Any] = ["groups": items, "total": await store.groups.count]
        if let next = page.next { body["next_page_token"] = next }
        return .json(200, body)
    }
}
