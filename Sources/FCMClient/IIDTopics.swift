import FCMCore
import Foundation

/// The legacy Instance ID topic API (wire reference §1A, §2): batches of up to 1000 registrations with
/// per-registration results in input order, and `iid/info` to read one registration's topics.
struct IIDTopics {
    let service: FCMHTTPService

    static let batchLimit = 1000

    var headers: [(String, String)] { [("Content-Type", "application/json"), ("access_token_auth", "true")] }

    func subscriptions(of registration: Registration) async throws -> RegistrationStatus {
        let url = "\(service.endpoints.iidBase)/iid/info/\(URLComponentEncoder.encode(registration.value))?details=true"
        let response = try await service.send(HTTPRequest(method: "GET", url: url, headers: headers))
        if response.status == 404 { return .gone(reason: "NOT_FOUND") }
        guard response.status == 200 else {
            let error = FCMErrorBody(status: response.status, body: response.body)
            if error.code == "InvalidToken" || error.meansRegistrationGone { return .gone(reason: error.code) }
            if let wrong = service.wrongProject(error, status: response.status) { throw wrong }
            throw FCMServiceError(status: response.status, code: error.code, message: "reading a registration's topics (iid/info): \(error.message)")
        }
        // `rel` is omitted when the registration has no topics; present, it must be what the reference shows,
        // or the answer would be read as "no topics" and forget recorded subscriptions.
        guard let object = try? JSONSerialization.jsonObject(with: response.body) as? [String: Any] else {
            throw FCMServiceError(status: 200, code: "BAD_RESPONSE", message: "iid/info answered with something other than a JSON object")
        }
        var topics = [String: Any]().keys
        if let rel = object["rel"] {
            guard let rel = rel as? [String: Any], let listed = rel["topics"] as? [String: Any] else {
                throw FCMServiceError(status: 200, code: "BAD_RESPONSE", message: "iid/info's rel.topics is not an object of topics")
            }
            topics = listed.keys
        }
        return .active(topics: service.topicSets.intern(Set(topics.map { service.topicNames.intern($0) })))
    }

    func request(topic: String, action: SubscriptionChange.Action, _ tokens: [String]) -> HTTPRequest {
        let operation = action == .subscribe ? "v1:batchAdd" : "v1:batchRemove"
        let body = FCMHTTPService.json(["to": "/topics/\(topic)", "registration_tokens": tokens])
        return HTTPRequest(method: "POST", url: "\(service.endpoints.iidBase)/iid/\(operation)", headers: headers, body: body)
    }

    func perform(topic: String, action: SubscriptionChange.Action, _ registrations: [Registration]) async throws
        -> [Registration: SubscriptionOutcome]
    {
        precondition(registrations.count <= Self.batchLimit, "IID batches hold at most 1000 registrations")
        let response = try await service.send(
            request(topic: topic, action: action, registrations.map(\.value)), pacedCost: Double(registrations.count))
        guard response.status == 200 else {
            let error = FCMErrorBody(status: response.status, body: response.body)
            throw FCMServiceError(
                status: response.status, code: error.code, message: "\(action.rawValue) \(Address.topic(topic)) (IID batch): \(error.message)")
        }
        let object = (try? JSONSerialization.jsonObject(with: response.body) as? [String: Any]) ?? [:]
        guard let results = object["results"] as? [[String: Any]], results.count == registrations.count else {
            throw FCMServiceError(status: 200, code: "BAD_RESPONSE", message: "the IID batch answer does not have one result per registration")
        }
        var outcomes: [Registration: SubscriptionOutcome] = [:]
        for (registration, result) in zip(registrations, results) {
            if let error = result["error"], !(error is String) {
                throw FCMServiceError(status: 200, code: "BAD_RESPONSE", message: "an IID batch result's error is not a string")
            }
            switch result["error"] as? String {
            case nil: outcomes[registration] = .done
            // PERMISSION_DENIED: the registration is another project's (wire reference §0.7), a configuration error.
            case "NOT_FOUND", "INVALID_ARGUMENT": outcomes[registration] = .registrationGone(reason: result["error"] as! String)
            case let code?: outcomes[registration] = .failed(code: code)
            }
        }
        return outcomes
    }

    func preview(topic: String, action: SubscriptionChange.Action, _ registrations: [Registration]) -> RequestPreview {
        let request = request(topic: topic, action: action, registrations.map(\.value))
        return RequestPreview(
            method: request.method, url: request.url, body: request.body.map { String(decoding: $0, as: UTF8.self) }, registrations: registrations)
    }
}
