import FCMClient
import FCMCore
import Foundation
import Synchronization
import Testing

/// An IID batch endpoint that answers each token as `verdict` says: nil for `{}`, or a per-token error code.
/// `attempt` counts the requests that named the token so far (1 for the first). `status` may answer a request
/// as a whole instead (by its number, from 1).
final class FakeIIDBatches: HTTPTransport, Sendable {
    private struct Log {
        var batches: [[String]] = []
        var attempts: [String: Int] = [:]
    }

    private let log = Mutex(Log())
    private let verdict: @Sendable (_ token: String, _ attempt: Int) -> String?
    private let status: @Sendable (_ request: Int) -> Int

    init(status: @escaping @Sendable (Int) -> Int = { _ in 200 }, verdict: @escaping @Sendable (String, Int) -> String?) {
        self.verdict = verdict
        self.status = status
    }

    var batches: [[String]] { log.withLock { $0.batches } }

    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        let body = try JSONSerialization.jsonObject(with: request.body ?? Data()) as? [String: Any]
        let tokens = body?["registration_tokens"] as? [String] ?? []
        let (number, attempts) = log.withLock { log in
            log.batches.append(tokens)
            return (
                log.batches.count,
                tokens.map { token in
                    log.attempts[token, default: 0] += 1
                    return log.attempts[token]!
                }
            )
        }
        let answer = status(number)
        guard answer == 200 else {
            return HTTPResponse(status: answer, body: Data((answer == 503 ? #"{"error":"UNAVAILABLE"}"# : #"{"error":"INVALID_ARGUMENT"}"#).utf8))
        }
        let results: [[String: String]] = zip(tokens, attempts).map { token, attempt in verdict(token, attempt).map { ["error": $0] } ?? [:] }
        return HTTPResponse(status: 200, body: try JSONSerialization.data(withJSONObject: ["results": results]))
    }
}

@Suite struct IIDRetryTests {
    static let tokens = (0..<1000).map { Registration(value: "t\($0):APA91b", kind: .token) }

    static func index(_ token: String) -> Int { Int(token.dropFirst().prefix { $0 != ":" })! }

    func service(_ transport: FakeIIDBatches, clock: ManualClock, limiter: RateLimiter?, statistics: SendStatistics = SendStatistics())
        -> FCMHTTPService
    {
        let sender = RequestSender(
            transport: transport, credentials: nil, limiter: limiter, clock: clock, jitter: FixedJitter([0.5]), statistics: statistics)
        return FCMHTTPService(
            sender: sender, endpoints: FCMEndpoints.emulator(hostAndPort: "127.0.0.1:1"),
            project: ProjectSettings(id: "legacy", senderId: "1", topicAPI: .iid))
    }

    @Test func registrationsAnsweredRetryAreSentAgainAloneAndPacedUntilDone() async throws {
        // 5 % RESOURCE_EXHAUSTED and 1 % INTERNAL the first time; a tenth of the refused are refused once more.
        let transport = FakeIIDBatches { token, attempt in
            let index = Self.index(token)
            if attempt == 1, index % 20 == 0 { return "RESOURCE_EXHAUSTED" }
            if attempt == 1, index % 100 == 7 { return "INTERNAL" }
            if attempt == 2, index % 200 == 0 { return "RESOURCE_EXHAUSTED" }
            return nil
        }
        let clock = ManualClock()
        let limiter = RateLimiter(perSecond: 1000, clock: clock)
        let statistics = SendStatistics()
        let outcomes = try await service(transport, clock: clock, limiter: limiter, statistics: statistics)
            .performBatch(topic: "news", action: .subscribe, Self.tokens)
        #expect(outcomes.count == 1000)
        #expect(outcomes.values.allSatisfy { $0 == .done })
        let firstRetry = Self.tokens.map(\.value).filter { Self.index($0) % 20 == 0 || Self.index($0) % 100 == 7 }
        #expect(transport.batches.map(\.count) == [1000, 60, 5])
        #expect(transport.batches[1] == firstRetry, "only the tokens answered retry, in their order")
        #expect(transport.batches[2] == Self.tokens.map(\.value).filter { Self.index($0) % 200 == 0 })
        #expect(statistics.snapshot["registration_retries"] == 65)
        // Backoff (a draw of 0.5: 0.25 s, then 0.5 s), and the first retry paced after the batch's 1,000 changes:
        // at 1,000/s its slot comes at 0.9 s (0.1 s of saved-up rate; the pacer releases a 25 ms tick early at
        // most), then 0.5 s more. Unpaced, the retries would have left at 0.25 and 0.75 s.
        #expect(clock.sleeps.first == 0.25)
        #expect(clock.now() >= 0.875 + 0.5, "the retries waited for their slots: \(clock.now())")
        #expect(clock.now() < 0.9 + 0.5 + 0.05, "and no longer: \(clock.now())")
    }

    @Test func aRegistrationStillRefusedAfterTheLastAttemptFailsSayingSo() async throws {
        let transport = FakeIIDBatches { token, _ in token == "t3:APA91b" ? "RESOURCE_EXHAUSTED" : nil }
        let clock = ManualClock()
        let outcomes = try await service(transport, clock: clock, limiter: nil).performBatch(topic: "news", action: .subscribe, Self.tokens)
        #expect(outcomes.values.filter { $0 == .done }.count == 999)
        let attempts = RetryPolicy().maxAttempts
        guard case .failed(let code, let message?) = outcomes[Self.tokens[3]] else {
            Issue.record("expected a failure with a message: \(String(describing: outcomes[Self.tokens[3]]))")
            return
        }
        #expect(code == "RESOURCE_EXHAUSTED")
        #expect(message.contains("in \(attempts) batches"), "\(message)")
        #expect(message.contains("a later apply retries it"))
        #expect(transport.batches.count == attempts)
        #expect(transport.batches.dropFirst().allSatisfy { $0 == ["t3:APA91b"] })
        // Full jitter at a draw of 0.5: half of 0.5, 1, 2, 4 and 8 s.
        #expect(clock.sleeps == [0.25, 0.5, 1, 2, 4])
    }

    @Test func aRetryRefusedAsAWholeFailsAndOneNeverAnsweredIsUnsettled() async throws {
        let refusedAt2 = FakeIIDBatches(status: { $0 == 2 ? 400 : 200 }, verdict: { token, _ in token == "t0:APA91b" ? "INTERNAL" : nil })
        let refused = try await service(refusedAt2, clock: ManualClock(), limiter: nil)
            .performBatch(topic: "news", action: .subscribe, Array(Self.tokens.prefix(3)))
        guard case .failed(let code, let message?) = refused[Self.tokens[0]] else {
            Issue.record("a refused retry made no change: \(String(describing: refused[Self.tokens[0]]))")
            return
        }
        #expect(code == "INVALID_ARGUMENT")
        #expect(message.contains("FCM answered INTERNAL"))

        // Every retry of the retry answered 503: the sender gives up and nobody knows what FCM did.
        let unavailable = FakeIIDBatches(status: { $0 >= 2 ? 503 : 200 }, verdict: { token, _ in token == "t0:APA91b" ? "INTERNAL" : nil })
        let unknown = try await service(unavailable, clock: ManualClock(), limiter: nil)
            .performBatch(topic: "news", action: .subscribe, Array(Self.tokens.prefix(3)))
        guard case .unsettled(let code, let message) = unknown[Self.tokens[0]] else {
            Issue.record("an unanswered retry is unsettled: \(String(describing: unknown[Self.tokens[0]]))")
            return
        }
        #expect(code == "UNAVAILABLE")
        #expect(unavailable.batches.count == 1 + RetryPolicy().maxAttempts, "the retry's own request was retried as any request is")
        #expect(message.contains("FCM may have made the change"))
        #expect(unknown[Self.tokens[1]] == .done && unknown[Self.tokens[2]] == .done)
    }

    /// Batches of 1,000 sent back to back for `seconds` (each with its retries), against a limiter of 10,000
    /// a second: the share of first answers that are `code` decides whether the rate moves.
    func pace(refusing share: Int, of code: String, seconds: Double) async throws -> (rate: Double, failed: Int) {
        let transport = FakeIIDBatches { token, attempt in attempt == 1 && Self.index(token) % 100 < share ? code : nil }
        let clock = ManualClock()
        let limiter = RateLimiter(perSecond: 10_000, clock: clock)
        let service = service(transport, clock: clock, limiter: limiter)
        var failed = 0
        var round = 0
        while clock.now() < seconds {
            let batch = (0..<1000).map { Registration(value: "t\($0):APA91b\(round)", kind: .token) }
            round += 1
            failed += try await service.performBatch(topic: "news", action: .subscribe, batch).values.filter { $0 != .done }.count
        }
        return (limiter.rate, failed)
    }

    @Test func perRegistrationRefusalsSlowThePaceAsA429Does() async throws {
        // 5 % at random is noise a retry absorbs (as for 429s): the rate holds.
        let scattered = try await pace(refusing: 5, of: "RESOURCE_EXHAUSTED", seconds: 10)
        #expect(scattered.rate == 10_000)
        #expect(scattered.failed == 0)
        // A fifth of every batch refused is a quota wall: the rate drops to below what FCM accepted.
        let wall = try await pace(refusing: 20, of: "RESOURCE_EXHAUSTED", seconds: 10)
        #expect(wall.rate < 9_000, "\(wall.rate)")
        #expect(wall.failed == 0)
        // INTERNAL is the backend's trouble: back-pressure, never below the floor.
        let backPressure = try await pace(refusing: 20, of: "INTERNAL", seconds: 10)
        #expect(backPressure.rate < 10_000 && backPressure.rate >= 1_000, "\(backPressure.rate)")
        #expect(backPressure.failed == 0)
    }
}
