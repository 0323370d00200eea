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

    /// One batch, and its registrations FCM answered RESOURCE_EXHAUSTED or INTERNAL ("retry", Google's IID
    /// reference) sent again on their own, after a backoff, paced like any change, until each is answered
    /// otherwise or runs out of the retry policy's attempts and time. Every registration gets one outcome.
    func perform(topic: String, action: SubscriptionChange.Action, _ registrations: [Registration]) async throws
        -> [Registration: SubscriptionOutcome]
    {
        precondition(registrations.count <= Self.batchLimit, "IID batches hold at most 1000 registrations")
        var outcomes = try await send(topic: topic, action: action, registrations)
        var retrying = registrations.filter { Self.asksForRetry(outcomes[$0]) }
        guard !retrying.isEmpty else { return outcomes }
        let sender = service.sender
        let start = sender.clock.now()
        var attempts = 1
        var stopped: String?
        while !retrying.isEmpty {
            guard
                case .retry(let delay) = sender.policy.decide(
                    status: nil, retryAfter: nil, attempt: attempts, elapsed: sender.clock.now() - start, jitter: sender.jitter,
                    now: sender.clock.wallTime())
            else { break }
            if let reason = sender.stop?.reason {
                stopped = reason
                break
            }
            sender.statistics.add("registration_retries", retrying.count)
            do {
                try await sender.clock.sleep(seconds: delay)
            } catch {
                stopped = "the run was cancelled"
                break
            }
            let answers: [Registration: SubscriptionOutcome]
            do {
                answers = try await send(topic: topic, action: action, retrying)
            } catch let error as StoppedBeforeSending {
                stopped = error.reason
                break
            } catch {
                for registration in retrying { outcomes[registration] = Self.retryFailed(outcomes[registration], attempts: attempts + 1, error) }
                return outcomes
            }
            attempts += 1
            for registration in retrying { outcomes[registration] = answers[registration] }
            retrying = retrying.filter { Self.asksForRetry(outcomes[$0]) }
        }
        let seconds = sender.clock.now() - start
        for registration in retrying {
            guard case .failed(let code, _) = outcomes[registration] else { continue }
            outcomes[registration] = .failed(code: code, message: Self.gaveUp(code, attempts: attempts, seconds: seconds, stopped: stopped))
        }
        return outcomes
    }

    static func asksForRetry(_ outcome: SubscriptionOutcome?) -> Bool {
        if case .failed(let code, _) = outcome { return SubscriptionOutcome.retryableCodes.contains(code) }
        return false
    }

    static func meaning(_ code: String) -> String {
        code == "RESOURCE_EXHAUSTED" ? "too many subscription changes in a short time" : "a failure on FCM's side"
    }

    static func gaveUp(_ code: String, attempts: Int, seconds: Double, stopped: String?) -> String {
        let tries = "FCM answered \(code) (\(meaning(code))) for this registration in \(attempts) batches over \(String(format: "%.1f", seconds)) s"
        if let stopped { return "\(tries), and it was not sent again: \(stopped). Not changed; a later apply retries it" }
        return "\(tries), as many as the retry policy allows. Not changed; a later apply retries it"
    }

    /// A retry's request failed as a whole: a refusal (4xx) made no change; anything else may have.
    static func retryFailed(_ earlier: SubscriptionOutcome?, attempts: Int, _ error: any Error) -> SubscriptionOutcome {
        var code = "TRANSPORT"
        var refused = false
        if let error = error as? FCMServiceError {
            code = error.code
            refused = (400..<500).contains(error.status)
        }
        var first = "RESOURCE_EXHAUSTED"
        if case .failed(let earlierCode, _) = earlier { first = earlierCode }
        let what = "FCM answered \(first) (\(meaning(first))) for this registration; retry \(attempts - 1) failed as a whole: \(error)"
        if refused { return .failed(code: code, message: "\(what). Not changed; a later apply retries it") }
        return .unsettled(code: code, message: "\(what). FCM may have made the change: the next run reads it back")
    }

    /// One request: the batch's answer, a result per registration in input order, tallied to the rate limiter
    /// change by change.
    func send(topic: String, action: SubscriptionChange.Action, _ registrations: [Registration]) async throws
        -> [Registration: SubscriptionOutcome]
    {
        let sender = service.sender
        let response = try await sender.send(
            request(topic: topic, action: action, registrations.map(\.value)), pacedCost: Double(registrations.count), resultsPerChange: true)
        guard response.status == 200 else {
            let error = FCMErrorBody(status: response.status, body: response.body)
            throw FCMServiceError(
                status: response.status, code: error.code, message: "\(action.operation) \(Address.topic(topic)) (IID batch): \(error.message)")
        }
        let object = (try? JSONSerialization.jsonObject(with: response.body) as? [String: Any]) ?? [:]
        guard let results = object["results"] as? [[String: Any]], results.count == registrations.count else {
            // An answer that says nothing of its changes is, to the limiter, no answer at all.
            sender.tally(RateLimiter.Tally(failed: registrations.count))
            throw FCMServiceError(status: 200, code: "BAD_RESPONSE", message: "the IID batch answer does not have one result per registration")
        }
        var outcomes: [Registration: SubscriptionOutcome] = [:]
        var tally = RateLimiter.Tally()
        for (registration, result) in zip(registrations, results) {
            if let error = result["error"], !(error is String) {
                sender.tally(RateLimiter.Tally(failed: registrations.count))
                throw FCMServiceError(status: 200, code: "BAD_RESPONSE", message: "an IID batch result's error is not a string")
            }
            switch result["error"] as? String {
            case nil:
                outcomes[registration] = .done
                tally.accepted += 1
            // PERMISSION_DENIED: the registration is another project's (wire reference §0.7), a configuration error.
            case "NOT_FOUND", "INVALID_ARGUMENT":
                outcomes[registration] = .registrationGone(reason: result["error"] as! String)
                tally.accepted += 1
            case let code?:
                outcomes[registration] = .failed(code: code)
                switch code {
                case "RESOURCE_EXHAUSTED": tally.refused += 1
                case "INTERNAL": tally.failed += 1
                default: tally.accepted += 1
                }
            }
        }
        sender.tally(tally)
        return outcomes
    }

    func preview(topic: String, action: SubscriptionChange.Action, _ registrations: [Registration]) -> RequestPreview {
        let request = request(topic: topic, action: action, registrations.map(\.value))
        return RequestPreview(
            method: request.method, url: request.url, body: request.body.map { String(decoding: $0, as: UTF8.self) }, registrations: registrations)
    }
}
