import FCMCore
import Foundation

/// The live `FCMService`: builds the wire requests of the device-group and v1 topic APIs and reads
/// their answers. Request building is shared with `preview`, so `apply --dry-run` prints exactly what
/// `apply` sends.
package struct FCMHTTPService: FCMService {
    package let sender: RequestSender
    package let endpoints: FCMEndpoints
    package let project: ProjectSettings

    /// Topic names and sets of topics read back from FCM, each stored once.
    let topicNames = InternTable<String>()
    let topicSets = InternTable<Set<String>>()
    let exportProbe = GroupExportProbe()

    /// Who the credentials are (a service account's email) and the project they belong to, when the
    /// credentials say: named when FCM refuses them, beside the manifest's project.
    package var caller: (account: String?, project: String?) = (nil, nil)

    /// `…/v1/projects/P/registrations/`, the start of every v1 subscription URL, encoded once.
    let registrationsPrefix: String

    package init(sender: RequestSender, endpoints: FCMEndpoints, project: ProjectSettings) {
        self.sender = sender
        self.endpoints = endpoints
        self.project = project
        registrationsPrefix = "\(endpoints.fcmBase)/v1/projects/\(URLComponentEncoder.encode(project.id))/registrations/"
    }

    /// The legacy IID API takes up to 1000 registrations per request; the v1 API one.
    package var topicBatchSize: Int { project.topicAPI == .iid ? IIDTopics.batchLimit : 1 }

    static let groupNotFound = "notification_key not found"
    static let groupAlreadyExists = "notification_key already exists"
    /// FCM's answer to a group step none of whose registrations it accepts (wire reference §3).
    static let noValidRegistrations = "no valid registration ids"

    /// The v1 list API's maximum page size; larger values are coerced to it anyway (wire reference §1B).
    static let listPageSize = 2000

    // MARK: Device groups

    package func groupKey(name: String) async throws -> String? {
        let url = "\(endpoints.fcmBase)/fcm/notification?notification_key_name=\(URLComponentEncoder.encode(name))"
        let response = try await send(HTTPRequest(method: "GET", url: url, headers: groupHeaders))
        if response.status == 200 { return try Self.notificationKey(in: response, url: url) }
        let error = FCMErrorBody(status: response.status, body: response.body)
        if error.code == Self.groupNotFound || response.status == 404 { return nil }
        if let denied = groupRefusal(error, status: response.status) { throw denied }
        throw FCMServiceError(status: response.status, code: error.code, message: "reading the key of \(Address.group(name)): \(error.message)")
    }

    package func groupMembers(name: String, key: String) async throws -> Set<Registration>? {
        guard let export = endpoints.groupExportURL, !exportProbe.isOff else { return nil }
        let url = "\(export)\(export.contains("?") ? "&" : "?")notification_key=\(URLComponentEncoder.encode(key))"
        let response = try await send(HTTPRequest(method: "GET", url: url, headers: groupHeaders))
        if Self.exportAbsentStatuses.contains(response.status) {
            exportProbe.turnOff(because: "\(export) answered \(response.status)")
            return nil
        }
        guard response.status == 200 else {
            let error = FCMErrorBody(status: response.status, body: response.body)
            throw FCMServiceError(
                status: response.status, code: error.code, message: "exporting the members of \(Address.group(name)): \(error.message)")
        }
        let object = try? JSONSerialization.jsonObject(with: response.body) as? [String: Any]
        guard let ids = object?["registration_ids"] as? [String] else {
            throw FCMServiceError(status: 200, code: "BAD_RESPONSE", message: "the member export of \(Address.group(name)) has no registration_ids")
        }
        // FCM deletes a group when its last member leaves, so a key with no members is an answer that would
        // forget the group's record without FCM saying the group is gone: unreadable.
        guard !ids.isEmpty else {
            throw FCMServiceError(
                status: 200, code: "BAD_RESPONSE", message: "the member export of \(Address.group(name)) lists no members for a live key")
        }
        return Set(ids.map(Registration.init(inferring:)))
    }

    /// Answers that mean "no such API here": the probe is turned off and the state's records stand.
    static let exportAbsentStatuses: Set<Int> = [400, 404, 405]

    /// Why the member export probe was turned off in this run, for the one note the command prints.
    package var groupExportFallback: String? { exportProbe.reason }

    package func performGroupStep(_ step: GroupStep, name: String, key: String?) async throws -> String? {
        let request = groupStepRequest(step, name: name, key: key, text: \.value)
        let response = try await send(request)
        guard response.status == 200 else {
            let error = FCMErrorBody(status: response.status, body: response.body)
            // Only an earlier attempt of this very create can have made the group since the refresh saw none:
            // its reply was lost, and the key comes from the documented GET by name (wire reference §3).
            if case .create = step, error.code == Self.groupAlreadyExists, response.earlierAttemptUnanswered,
                let key = try await groupKey(name: name)
            {
                return key
            }
            if let denied = groupRefusal(error, status: response.status) { throw denied }
            throw FCMServiceError(
                status: response.status, code: error.code, message: "\(Address.group(name)) \(step.operation): \(error.message)",
                refusal: error.code == Self.noValidRegistrations ? .noValidRegistrations : nil)
        }
        // A create or an add answers with the group's key; an answer without one (`{}`, an empty or mistyped key, a
        // proxy's page) says nothing of what happened, so it is an unknown outcome, settled by the next run. A
        // remove may take the last members and with them the group: its key is returned when there is one, and
        // the applier decides whether its absence is expected.
        if case .remove = step { return try? Self.notificationKey(in: response, url: request.url) }
        return try Self.notificationKey(in: response, url: request.url)
    }

    package func preview(_ step: GroupStep, name: String, key: String?) -> [RequestPreview] {
        let request = groupStepRequest(step, name: name, key: key ?? "<key of \(Address.group(name)), read just before>", text: \.value)
        return [
            RequestPreview(
                method: request.method, url: request.url, body: request.body.map { String(decoding: $0, as: UTF8.self) },
                registrations: step.registrations)
        ]
    }

    var groupHeaders: [(String, String)] {
        [("Content-Type", "application/json"), ("access_token_auth", "true"), ("project_id", project.senderId)]
    }

    func groupStepRequest(_ step: GroupStep, name: String, key: String?, text: (Registration) -> String) -> HTTPRequest {
        var body: [String: Any] = [
            // FCM's names for the operations are fcmctl's own (OperationKind's raw values).
            "operation": step.operation.rawValue,
            "notification_key_name": name,
            "registration_ids": step.registrations.map(text),
        ]
        if case .create = step {} else { body["notification_key"] = key ?? "" }
        return HTTPRequest(method: "POST", url: "\(endpoints.fcmBase)/fcm/notification", headers: groupHeaders, body: Self.json(body))
    }

    static func notificationKey(in response: HTTPResponse, url: String) throws -> String {
        let object = try? JSONSerialization.jsonObject(with: response.body) as? [String: Any]
        guard let key = object?["notification_key"] as? String, !key.isEmpty else {
            throw FCMServiceError(status: response.status, code: "BAD_RESPONSE", message: "\(url) answered without a notification_key")
        }
        return key
    }

    // MARK: Topic subscriptions (v1)

    /// `registrationSegment` is already encoded (or, in previews, a redacted placeholder).
    func subscriptionsURL(_ registrationSegment: String) -> String {
        "\(registrationsPrefix)\(registrationSegment)/topicSubscriptions"
    }

    package func subscriptions(of registration: Registration) async throws -> RegistrationStatus {
        if project.topicAPI == .iid { return try await iid.subscriptions(of: registration) }
        var topics = Set<String>()
        var pageToken: String?
        repeat {
            var url = subscriptionsURL(URLComponentEncoder.encode(registration.value)) + "?pageSize=\(Self.listPageSize)"
            if let pageToken { url += "&pageToken=\(URLComponentEncoder.encode(pageToken))" }
            let response = try await send(HTTPRequest(method: "GET", url: url, headers: v1Headers))
            guard response.status == 200 else {
                let error = FCMErrorBody(status: response.status, body: response.body)
                if error.meansRegistrationGone { return .gone(reason: error.code) }
                throw wrongProject(error, status: response.status)
                    ?? FCMServiceError(status: response.status, code: error.code, message: "listing the topics of a registration: \(error.message)")
            }
            let page = try Self.subscriptionPage(response.body)
            for topic in page.topics { topics.insert(topicNames.intern(topic)) }
            pageToken = page.next
        } while pageToken != nil
        return .active(topics: topicSets.intern(topics))
    }

    /// Field casing is [UNCERTAIN] (wire reference §1B): snake_case in Firebase's docs, lowerCamelCase in
    /// generated clients, so both are read. Strictly: an absent list is an empty one (proto3 JSON omits empty
    /// repeated fields), but a list of another type, or an item without a readable topic, makes the whole
    /// answer unreadable. Read as empty, a garbled answer would forget recorded subscriptions that still exist.
    package static func subscriptionPage(_ body: Data) throws -> (topics: [String], next: String?) {
        func unreadable(_ why: String) -> FCMServiceError {
            FCMServiceError(status: 200, code: "BAD_RESPONSE", message: "the topic list is unreadable: \(why)")
        }
        guard let object = try? JSONSerialization.jsonObject(with: body) as? [String: Any] else { throw unreadable("not a JSON object") }
        var topics: [String] = []
        if let field = object["topic_subscriptions"] ?? object["topicSubscriptions"] {
            guard let items = field as? [Any] else { throw unreadable("topicSubscriptions is not a list") }
            for item in items {
                guard let item = item as? [String: Any] else { throw unreadable("an item of topicSubscriptions is not an object") }
                if let topic = (item["topic_name"] ?? item["topicName"]) as? String, !topic.isEmpty {
                    topics.append(topic)
                } else if let name = item["name"] as? String, let topic = name.split(separator: "/").last, name.contains("/topicSubscriptions/") {
                    topics.append(String(topic))
                } else {
                    throw unreadable("an item of topicSubscriptions names no topic")
                }
            }
        }
        let token = object["next_page_token"] ?? object["nextPageToken"]
        guard token == nil || token is String else { throw unreadable("nextPageToken is not a string") }
        let next = token as? String
        return (topics, next?.isEmpty == false ? next : nil)
    }

    /// A 2xx to a change must be the answer of that change: a JSON object, and for a create the subscription
    /// it made (when the answer names a topic, the one asked for). An HTML page or garbage from a proxy is not
    /// FCM saying yes; it is an answer of unknown meaning, so the change stays pending (see `Applier`).
    package static func checkChangeAnswer(_ response: HTTPResponse, _ change: SubscriptionChange) throws {
        // google.protobuf.Empty comes as `{}`; an empty body to a delete is read the same way.
        if change.action == .unsubscribe && response.body.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D }) { return }
        // Read where it lies, by the state files' strict parser: this runs for every change an apply makes. Each
        // name found is only compared with the topic asked for; the answer is made into strings only to say
        // what is wrong with it.
        let topic = change.topic
        var names = [AnswerName](repeating: .absent, count: Self.answerNames.count)
        let readable = response.body.withUnsafeBytes { raw in
            (try? JSONParser.visitObjectStrings(raw, keys: Self.answerNames) { slot, text in
                // `name` is a resource path: its last segment is the topic (none when it is empty or all slashes).
                let compared = slot == 2 ? text.flatMap(Self.lastSegment) : text
                names[slot] = compared.map { .text(matches: $0.elementsEqual(topic.utf8)) } ?? .notText
            }) != nil
        }
        guard readable else {
            throw FCMServiceError(
                status: response.status, code: "BAD_RESPONSE",
                message: "the answer to \(change.action.operation) \(Address.topic(change.topic)) is not a JSON object")
        }
        // The topic the answer names: `topic_name` if present, else `topicName`; when the one present is not text,
        // the last segment of `name`.
        let first = names[0] == .absent ? 1 : 0
        let verdict = names[first].matches ?? names[2].matches
        guard change.action == .subscribe, verdict == false else { return }
        let fields = try response.body.withUnsafeBytes { try JSONParser.objectStrings($0, keys: Self.answerNames) }
        let named = fields[first] ?? fields[2]?.split(separator: "/").last.map(String.init) ?? ""
        throw FCMServiceError(
            status: response.status, code: "BAD_RESPONSE", message: "the answer to subscribe \(Address.topic(change.topic)) names topic \(named)")
    }

    /// What `split(separator: "/").last` gives, on bytes: the last segment that is not empty, nil if none is.
    static func lastSegment(_ text: UnsafeBufferPointer<UInt8>) -> UnsafeBufferPointer<UInt8>? {
        var end = text.count
        while end > 0, text[end - 1] == UInt8(ascii: "/") { end -= 1 }
        guard end > 0 else { return nil }
        var start = end
        while start > 0, text[start - 1] != UInt8(ascii: "/") { start -= 1 }
        return UnsafeBufferPointer(rebasing: text[start..<end])
    }

    package var v1Headers: [(String, String)] { Self.v1HeaderList }

    /// Where a create's answer may name its topic (wire reference §1B: the casing is uncertain, so both).
    static let answerNames: [StaticString] = ["topic_name", "topicName", "name"]

    /// What an answer holds under one of `answerNames`.
    enum AnswerName: Equatable {
        case absent
        case notText
        case text(matches: Bool)

        var matches: Bool? { if case .text(let matches) = self { matches } else { nil } }
    }

    /// Built once: every v1 request (a million in a fleet's apply) carries the same two.
    static let v1HeaderList = [("Content-Type", "application/json"), ("X-GOOG-API-FORMAT-VERSION", "2")]
    static let emptyObject = Data("{}".utf8)

    package func perform(_ change: SubscriptionChange) async throws -> SubscriptionOutcome {
        if project.topicAPI == .iid {
            return try await iid.perform(topic: change.topic, action: change.action, [change.registration])[change.registration] ?? .done
        }
        let request = subscriptionRequest(change)
        let response = try await send(request, pacedCost: 1)
        if response.status == 200 {
            try Self.checkChangeAnswer(response, change)
            return .done
        }
        let error = FCMErrorBody(status: response.status, body: response.body)
        // 409 ALREADY_EXISTS on create means the goal holds (the SDKs count it as success too); but only when no
        // earlier attempt went unanswered does it also say the subscription is not this run's work.
        if change.action == .subscribe, response.status == 409 || error.code == "ALREADY_EXISTS" {
            return response.earlierAttemptUnanswered ? .done : .alreadyExists
        }
        if error.meansRegistrationGone { return .registrationGone(reason: error.code) }
        throw wrongProject(error, status: response.status) ?? FCMServiceError(status: response.status, code: error.code, message: error.message)
    }

    /// A device-group request refused for a permission the credentials lack where the sender id points.
    func groupRefusal(_ error: FCMErrorBody, status: Int) -> FCMServiceError? {
        guard let permission = error.permission else { return nil }
        return FCMServiceError(
            status: status, code: "PERMISSION_DENIED", message: IAMAdvice.groupRefusal(permission, project: project, caller: caller),
            refusal: .permissionDenied(permission: permission))
    }

    /// What to check when FCM says the registration or the project is not the caller's.
    func wrongProject(_ error: FCMErrorBody, status: Int) -> FCMServiceError? {
        if let permission = error.permission {
            return FCMServiceError(
                status: status, code: "PERMISSION_DENIED", message: IAMAdvice.refusal(permission, project: project, caller: caller),
                refusal: .permissionDenied(permission: permission))
        }
        guard error.meansWrongProject else { return nil }
        let message =
            error.code == "SENDER_ID_MISMATCH"
            ? "the registration belongs to another Firebase project than '\(project.id)' (sender \(project.senderId)): check project.id "
                + "and project.senderId in the manifest, and which project the credentials belong to"
            : "FCM refused project '\(project.id)': \(error.message). Check that project.id is right and that the credentials' "
                + "account has the role roles/firebasecloudmessaging.admin in it"
        return FCMServiceError(status: status, code: error.code, message: message)
    }

    package func performBatch(topic: String, action: SubscriptionChange.Action, _ registrations: [Registration]) async throws
        -> [Registration: SubscriptionOutcome]
    {
        if project.topicAPI == .iid { return try await iid.perform(topic: topic, action: action, registrations) }
        var outcomes: [Registration: SubscriptionOutcome] = [:]
        for registration in registrations {
            outcomes[registration] = try await perform(SubscriptionChange(topic: topic, registration: registration, action: action))
        }
        return outcomes
    }

    package func performOne(topic: String, action: SubscriptionChange.Action, _ registration: Registration) async throws
        -> SubscriptionOutcome?
    {
        if project.topicAPI == .iid { return try await iid.perform(topic: topic, action: action, [registration])[registration] }
        return try await perform(SubscriptionChange(topic: topic, registration: registration, action: action))
    }

    package func previewBatch(topic: String, action: SubscriptionChange.Action, _ registrations: [Registration]) -> [RequestPreview] {
        if project.topicAPI == .iid { return [iid.preview(topic: topic, action: action, registrations)] }
        return registrations.flatMap { preview(SubscriptionChange(topic: topic, registration: $0, action: action)) }
    }

    var iid: IIDTopics { IIDTopics(service: self) }

    package func preview(_ change: SubscriptionChange) -> [RequestPreview] {
        if project.topicAPI == .iid { return [iid.preview(topic: change.topic, action: change.action, [change.registration])] }
        let request = subscriptionRequest(change)
        return [
            RequestPreview(
                method: request.method, url: request.url, body: request.body.map { String(decoding: $0, as: UTF8.self) },
                registrations: [change.registration])
        ]
    }

    func subscriptionRequest(_ change: SubscriptionChange) -> HTTPRequest {
        switch change.action {
        case .subscribe: HTTPRequest(method: "POST", url: subscriptionURL(change), headers: v1Headers, body: Self.emptyObject)
        case .unsubscribe: HTTPRequest(method: "DELETE", url: subscriptionURL(change), headers: v1Headers)
        }
    }

    /// `…/registrations/R/topicSubscriptions?topicName=T` (create) or `…/topicSubscriptions/T?allowMissing=true`
    /// (delete), written in one allocation straight from where the registration is kept: an apply builds one per
    /// change, and building it from interpolated pieces cost a string apiece.
    func subscriptionURL(_ change: SubscriptionChange) -> String {
        var topic = URLComponentEncoder.encode(change.topic)
        let middle: StaticString = change.action == .subscribe ? "/topicSubscriptions?topicName=" : "/topicSubscriptions/"
        let end: StaticString = change.action == .subscribe ? "" : "?allowMissing=true"
        let registration = change.registration
        var prefix = registrationsPrefix
        return prefix.withUTF8 { prefix in
            topic.withUTF8 { topic in
                // Room for every byte of the registration escaped: one pass over it, not a count and a copy.
                let capacity = prefix.count + 3 * registration.utf8Count + middle.utf8CodeUnitCount + topic.count + end.utf8CodeUnitCount
                return String(unsafeUninitializedCapacity: capacity) { out in
                    func copy(_ bytes: UnsafeBufferPointer<UInt8>, at index: Int) -> Int {
                        guard let base = bytes.baseAddress, !bytes.isEmpty else { return index }
                        (out.baseAddress! + index).update(from: base, count: bytes.count)
                        return index + bytes.count
                    }
                    var index = copy(prefix, at: 0)
                    index = registration.writeURLComponent(into: out, at: index)
                    index = copy(UnsafeBufferPointer(start: middle.utf8Start, count: middle.utf8CodeUnitCount), at: index)
                    index = copy(topic, at: index)
                    return copy(UnsafeBufferPointer(start: end.utf8Start, count: end.utf8CodeUnitCount), at: index)
                }
            }
        }
    }

    // MARK: Plumbing

    package func send(_ request: HTTPRequest, pacedCost: Double? = nil) async throws -> HTTPResponse {
        try await sender.send(request, pacedCost: pacedCost)
    }

    package static func json(_ object: [String: Any]) -> Data {
        (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data("{}".utf8)
    }
}
