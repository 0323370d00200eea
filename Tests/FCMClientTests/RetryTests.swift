import FCMClient
import FCMCore
import Foundation
import Testing

/// A transport that answers from a script, recording what it was sent.
final class ScriptedTransport: HTTPTransport, @unchecked Sendable {
    enum Step {
        case respond(Int, [String: String])
        case answer(Int, String)
        case fail
    }

    private let lock = NSLock()
    private var steps: [Step]
    private(set) var sent: [HTTPRequest] = []

    init(_ steps: [Step]) { self.steps = steps }

    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        let step: Step = lock.withLock {
            sent.append(request)
            return steps.isEmpty ? .respond(200, [:]) : steps.removeFirst()
        }
        switch step {
        case .respond(let status, let headers): return HTTPResponse(status: status, headers: headers)
        case .answer(let status, let body): return HTTPResponse(status: status, body: Data(body.utf8))
        case .fail: throw TransportError(url: request.url, message: "connection reset")
        }
    }

    var authorizations: [String?] { lock.withLock { sent.map { $0.headers.first { $0.0 == "Authorization" }?.1 } } }
}

@Suite struct RetryPolicyTests {
    let policy = RetryPolicy()
    let now = Date(timeIntervalSince1970: 1_800_000_000)

    @Test(arguments: [400, 401, 403, 404, 409])
    func clientErrorsAreNeverRetried(status: Int) {
        #expect(policy.decide(status: status, retryAfter: nil, attempt: 1, elapsed: 0, jitter: FixedJitter([0.5]), now: now) == .giveUp)
    }

    /// One list for the client and the apply report: the front end's 502 and 504 are retried too.
    @Test(arguments: [429, 500, 502, 503, 504])
    func transientStatusesAreRetried(status: Int) {
        #expect(policy.decide(status: status, retryAfter: nil, attempt: 1, elapsed: 0, jitter: FixedJitter([0.5]), now: now) != .giveUp)
        #expect(TransientStatus.all.contains(status))
    }

    @Test func fullJitterGrowsExponentiallyAndIsBounded() {
        // A draw of 1.0 (nearly) shows the ceiling: 0.5, 1, 2, 4, 8 … capped at maxDelay.
        let ceilings = (1...8).map { attempt -> Double in
            var policy = RetryPolicy()
            policy.maxAttempts = 20
            guard
                case .retry(let delay) = policy.decide(
                    status: 503, retryAfter: nil, attempt: attempt, elapsed: 0, jitter: FixedJitter([0.999999]), now: now)
            else { return -1 }
            return (delay * 1000).rounded() / 1000
        }
        #expect(ceilings == [0.5, 1, 2, 4, 8, 16, 30, 30])
        #expect(policy.decide(status: 500, retryAfter: nil, attempt: 3, elapsed: 0, jitter: FixedJitter([0.25]), now: now) == .retry(after: 0.5))
        #expect(policy.decide(status: nil, retryAfter: nil, attempt: 1, elapsed: 0, jitter: FixedJitter([0]), now: now) == .retry(after: 0))
    }

    @Test func retryAfterSecondsAndHTTPDateAreHonouredUpToACap() {
        #expect(policy.decide(status: 429, retryAfter: "7", attempt: 1, elapsed: 0, jitter: FixedJitter([0.1]), now: now) == .retry(after: 7))
        let date = "Fri, 15 Jan 2027 08:00:10 GMT"
        let base = RetryPolicy.parseRetryAfter("Fri, 15 Jan 2027 08:00:00 GMT", now: now)!
        let later = RetryPolicy.parseRetryAfter(date, now: now)!
        #expect(later - base == 10)
        let tenSecondsAway = Date(timeIntervalSince1970: now.timeIntervalSince1970)
        #expect(RetryPolicy.parseRetryAfter(HTTPDate.format(tenSecondsAway.addingTimeInterval(10)), now: tenSecondsAway) == 10)
        #expect(policy.decide(status: 503, retryAfter: "600", attempt: 1, elapsed: 0, jitter: FixedJitter([0.1]), now: now) == .giveUp)
    }

    @Test func attemptsAndTotalTimeAreBounded() {
        #expect(policy.decide(status: 503, retryAfter: nil, attempt: policy.maxAttempts, elapsed: 0, jitter: FixedJitter([0.1]), now: now) == .giveUp)
        #expect(
            policy.decide(status: 503, retryAfter: "10", attempt: 1, elapsed: policy.maxTotal - 5, jitter: FixedJitter([0.1]), now: now) == .giveUp)
    }
}

enum HTTPDate {
    static func format(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter.string(from: date)
    }
}

@Suite struct RequestSenderTests {
    func sender(_ transport: ScriptedTransport, clock: ManualClock, credentials: (any AccessTokenProvider)? = nil, limiter: RateLimiter? = nil)
        -> RequestSender
    {
        RequestSender(transport: transport, credentials: credentials, limiter: limiter, clock: clock, jitter: FixedJitter([0.5]))
    }

    @Test func transientFailuresAreRetriedWithBackoff() async throws {
        let clock = ManualClock()
        let transport = ScriptedTransport([.respond(503, [:]), .fail, .respond(429, ["retry-after": "3"]), .respond(200, [:])])
        let response = try await sender(transport, clock: clock).send(HTTPRequest(method: "GET", url: "http://x/y"))
        #expect(response.status == 200)
        #expect(transport.sent.count == 4)
        #expect(clock.sleeps == [0.25, 0.5, 3])
    }

    @Test func otherClientErrorsReturnAtOnce() async throws {
        let clock = ManualClock()
        let transport = ScriptedTransport([.respond(400, [:])])
        #expect(try await sender(transport, clock: clock).send(HTTPRequest(method: "GET", url: "http://x/y")).status == 400)
        #expect(transport.sent.count == 1)
        #expect(clock.sleeps.isEmpty)
    }

    @Test func persistentFailureGivesUpAfterTheLastAttempt() async throws {
        let clock = ManualClock()
        let transport = ScriptedTransport(Array(repeating: .fail, count: 10))
        await #expect(throws: TransportError.self) {
            _ = try await sender(transport, clock: clock).send(HTTPRequest(method: "GET", url: "http://x/y"))
        }
        #expect(transport.sent.count == RetryPolicy().maxAttempts)
    }

    @Test func a401RefreshesTheTokenOnceAndRetries() async throws {
        let clock = ManualClock()
        let counter = Counter()
        let provider = CachedTokenProvider(clock: clock) { ("token-\(counter.next())", 3600) }
        let transport = ScriptedTransport([.respond(401, [:]), .respond(200, [:])])
        #expect(try await sender(transport, clock: clock, credentials: provider).send(HTTPRequest(method: "GET", url: "http://x/y")).status == 200)
        #expect(transport.authorizations == ["Bearer token-1", "Bearer token-2"])

        // The headers made for a token are kept per header list: another request's own headers are not lost.
        let mixed = ScriptedTransport([])
        let signed = sender(mixed, clock: clock, credentials: provider)
        _ = try await signed.send(HTTPRequest(method: "GET", url: "http://x/y"))
        _ = try await signed.send(HTTPRequest(method: "POST", url: "http://x/y", headers: [("Content-Type", "application/json")]))
        _ = try await signed.send(HTTPRequest(method: "GET", url: "http://x/y"))
        #expect(mixed.sent.map { $0.headers.map(\.0) } == [["Authorization"], ["Content-Type", "Authorization"], ["Authorization"]])
        #expect(Set(mixed.authorizations) == ["Bearer token-2"])

        let stubborn = ScriptedTransport([.respond(401, [:]), .respond(401, [:]), .respond(200, [:])])
        #expect(try await sender(stubborn, clock: clock, credentials: provider).send(HTTPRequest(method: "GET", url: "http://x/y")).status == 401)
        #expect(stubborn.sent.count == 2, "one refresh, then the answer stands")
    }

    /// FCM's 401 THIRD_PARTY_AUTH_ERROR is about the project's APNs or web push credentials: the token is fine.
    @Test func a401ThirdPartyAuthErrorIsNotAReasonToRefresh() async throws {
        let clock = ManualClock()
        let counter = Counter()
        let provider = CachedTokenProvider(clock: clock) { ("token-\(counter.next())", 3600) }
        let body =
            #"{"error":{"code":401,"message":"Auth error from APNS or Web Push Service","status":"UNAUTHENTICATED","#
            + #""details":[{"@type":"type.googleapis.com/google.firebase.fcm.v1.FcmError","errorCode":"THIRD_PARTY_AUTH_ERROR"}]}}"#
        let transport = ScriptedTransport([.answer(401, body), .respond(200, [:])])
        #expect(try await sender(transport, clock: clock, credentials: provider).send(HTTPRequest(method: "POST", url: "http://x/y")).status == 401)
        #expect(transport.authorizations == ["Bearer token-1"])
    }

    @Test func quotaRefusalsOfPacedRequestsDoNotUseUpTheAttempts() async throws {
        let clock = ManualClock()
        let limiter = RateLimiter(perSecond: 5000, clock: clock)
        let storm = ScriptedTransport(Array(repeating: .respond(429, [:]), count: 10) + [.respond(200, [:])])
        let paced = try await sender(storm, clock: clock, limiter: limiter).send(HTTPRequest(method: "POST", url: "http://x/y"), pacedCost: 1)
        #expect(paced.status == 200)
        #expect(storm.sent.count == 11)
        #expect(clock.sleeps.reduce(0, +) <= RetryPolicy().maxTotal, "still bounded by the total time")
        // An unpaced request (a read) still gives up after the last attempt.
        let reads = ScriptedTransport(Array(repeating: .respond(429, [:]), count: 10))
        #expect(try await sender(reads, clock: clock).send(HTTPRequest(method: "GET", url: "http://x/y")).status == 429)
        #expect(reads.sent.count == RetryPolicy().maxAttempts)
    }

    @Test func quotaRefusalsBetweenOtherFailuresDoNotCountAgainstThem() async throws {
        let clock = ManualClock()
        let limiter = RateLimiter(perSecond: 5000, clock: clock)
        // Five 503s, each after a 429: ten failures in a row, but only five count, and the sixth try succeeds.
        let mixed = ScriptedTransport(Array(repeating: [.respond(429, [:]), .respond(503, [:])], count: 5).flatMap { $0 } + [.respond(200, [:])])
        let paced = try await sender(mixed, clock: clock, limiter: limiter).send(HTTPRequest(method: "POST", url: "http://x/y"), pacedCost: 1)
        #expect(paced.status == 200)
        #expect(mixed.sent.count == 11)
        // Six 503s still end it, 429s or not.
        let failing = ScriptedTransport(Array(repeating: [.respond(429, [:]), .respond(503, [:])], count: 6).flatMap { $0 } + [.respond(200, [:])])
        let failed = try await sender(failing, clock: clock, limiter: limiter).send(HTTPRequest(method: "POST", url: "http://x/y"), pacedCost: 1)
        #expect(failed.status == 503)
        #expect(failing.sent.count == 12)
    }

    @Test func pacedAnswersReachTheLimiter() async throws {
        let clock = ManualClock()
        let limiter = RateLimiter(perSecond: 100, clock: clock)
        // Forty answers over more than a window, half of them 429: a wall, and the rate drops.
        let transport = ScriptedTransport(Array(repeating: [.respond(429, [:]), .respond(200, [:])], count: 20).flatMap { $0 })
        for _ in 0..<20 {
            clock.advance(0.05)
            _ = try await sender(transport, clock: clock, limiter: limiter).send(HTTPRequest(method: "POST", url: "http://x/y"), pacedCost: 1)
        }
        #expect(limiter.rate < 100)
        #expect(limiter.rate >= 1)
    }
}

final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var value = 0
    func next() -> Int {
        lock.withLock {
            value += 1
            return value
        }
    }
    var count: Int { lock.withLock { value } }
}
