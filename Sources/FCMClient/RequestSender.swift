import FCMCore
import Foundation
import Synchronization

/// Supplies the bearer token for FCM requests. `invalidate` is called after a 401 so the next call
/// fetches a fresh one.
package protocol AccessTokenProvider: Sendable {
    func token() async throws -> String
    func invalidate(_ token: String) async
    /// Sent as `x-goog-user-project`: the project Google bills and checks quota against, which user
    /// credentials need (their own OAuth client's project rarely has FCM enabled).
    var quotaProject: String? { get }
}

extension AccessTokenProvider {
    package var quotaProject: String? { nil }
}

/// Counts of what happened on the wire, for benchmarks and `--verbose` summaries.
package final class SendStatistics: Sendable {
    private struct Counts {
        var named: [String: Int] = [:]
        var requests = 0
        // Counted by number: a "status_200" key would be a string built per request.
        var statuses: [Int: Int] = [:]
    }

    private let counts = Mutex(Counts())

    package init() {}

    func add(_ key: String, _ count: Int = 1) { counts.withLock { $0.named[key, default: 0] += count } }

    func addRequest() { counts.withLock { $0.requests += 1 } }

    func add(status: Int) { counts.withLock { $0.statuses[status, default: 0] += 1 } }

    package var snapshot: [String: Int] {
        counts.withLock { counts in
            var all = counts.named
            if counts.requests > 0 { all["requests"] = counts.requests }
            for (status, count) in counts.statuses { all["status_\(status)"] = count }
            return all
        }
    }
}

/// Sends one logical FCM request: adds the credentials, waits for the project's rate limiter when the
/// request changes subscriptions, retries what the policy allows, and refreshes the token once on 401.
package struct RequestSender: Sendable {
    package let transport: any HTTPTransport
    package let credentials: (any AccessTokenProvider)?
    package let limiter: RateLimiter?
    package let policy: RetryPolicy
    package let clock: any RunClock
    package let jitter: any JitterSource
    package let statistics: SendStatistics
    /// Armed with the state lock while a command holds it: requests that change FCM wait on it (see `LeaseFence`).
    package let fence: LeaseFence?
    /// Once it is requested, paced requests not yet sent are not sent (`StoppedBeforeSending`) and paced
    /// requests are not retried: the answer they had stands.
    package let stop: StopSignal?
    let bearer = BearerHeader()

    package init(
        transport: any HTTPTransport, credentials: (any AccessTokenProvider)?, limiter: RateLimiter? = nil,
        policy: RetryPolicy = RetryPolicy(), clock: any RunClock = SystemClock(), jitter: any JitterSource = SystemJitter(),
        statistics: SendStatistics = SendStatistics(), fence: LeaseFence? = nil, stop: StopSignal? = nil
    ) {
        self.fence = fence
        self.stop = stop
        self.transport = transport
        self.credentials = credentials
        self.limiter = limiter
        self.policy = policy
        self.clock = clock
        self.jitter = jitter
        self.statistics = statistics
    }

    /// `pacedCost`: how many subscription changes the request makes (nil for requests the quota ignores); the
    /// limiter weighs the answer by it. `resultsPerChange`: a 200 carries a result per change (an IID batch),
    /// which the caller reads and hands to `tally`; the sender tallies every other answer itself.
    package func send(_ request: HTTPRequest, pacedCost: Double? = nil, resultsPerChange: Bool = false) async throws -> HTTPResponse {
        let start = clock.now()
        var attempt = 0
        // Quota refusals of paced requests do not count against the attempts (see below).
        var quotaRefusals = 0
        var refreshedAfter401 = false
        // Only subscription changes stop: the state and lock requests of a stopping run must still go out.
        let stop = pacedCost == nil ? nil : self.stop
        var last: Result<HTTPResponse, TransportError>?
        var unanswered = false
        let changes = pacedCost.map { max(1, Int($0.rounded())) } ?? 0
        while true {
            attempt += 1
            if let pacedCost, let limiter { try await limiter.acquire(pacedCost) }
            if let stop, let reason = stop.reason {
                switch last {
                case .success(let response): return response
                case .failure(let error): throw error
                case nil: throw StoppedBeforeSending(reason: reason)
                }
            }
            var authorized = request
            if let fence, request.method != "GET", let deadline = try await fence.admit() {
                authorized.timeoutMilliseconds = Int(deadline * 1000)
                authorized.notAfter = fence.latestStart(deadline: deadline)
            }
            var token: String?
            if let credentials {
                let value = try await credentials.token()
                token = value
                authorized.headers = bearer.headers(request.headers, token: value)
                if let project = credentials.quotaProject { authorized.headers.append(("x-goog-user-project", project)) }
            }
            statistics.addRequest()
            var response: HTTPResponse
            do {
                response = try await transport.send(authorized)
                response.earlierAttemptUnanswered = unanswered
            } catch let error as TransportError {
                unanswered = true
                statistics.add("transport_errors")
                if pacedCost != nil, let limiter { limiter.record(RateLimiter.Tally(.serverError, changes: changes)) }
                last = .failure(error)
                if stop?.isRequested == true { throw error }
                switch policy.decide(
                    status: nil, retryAfter: nil, attempt: attempt, elapsed: clock.now() - start, jitter: jitter, now: clock.wallTime())
                {
                case .retry(let delay):
                    statistics.add("retries")
                    try await clock.sleep(seconds: delay)
                    continue
                case .giveUp:
                    throw error
                }
            }
            statistics.add(status: response.status)
            if response.status == 401, let token, let credentials, !refreshedAfter401,
                !FCMErrorBody.isThirdPartyAuthError(status: response.status, body: response.body)
            {
                // An expired or revoked token: fetch a new one once, then let the answer stand.
                refreshedAfter401 = true
                await credentials.invalidate(token)
                attempt -= 1
                continue
            }
            // A quota refusal of a paced request is the limiter's signal to slow down, not a failing request: it
            // does not use up the attempts (only the total time bounds it), so a run started with --qps far above
            // the quota converges below it instead of failing requests.
            let quotaRefusal = response.status == 429 && pacedCost != nil && limiter != nil
            if pacedCost != nil, let limiter, !(resultsPerChange && response.status == 200) {
                limiter.record(
                    RateLimiter.Tally(response.status == 429 ? .refused : response.status >= 500 ? .serverError : .accepted, changes: changes))
            }
            guard RetryPolicy.retryableStatuses.contains(response.status) else { return response }
            if response.status >= 500 { unanswered = true }
            last = .success(response)
            if stop?.isRequested == true { return response }
            if quotaRefusal { quotaRefusals += 1 }
            // Other failures count without the quota refusals between them: with 5 % of answers 429 and 10 % 503,
            // six failures of any kind in a row failed about one change in 130,000.
            switch policy.decide(
                status: response.status, retryAfter: response.headers["retry-after"],
                attempt: quotaRefusal ? min(attempt, policy.maxAttempts - 1) : attempt - quotaRefusals, elapsed: clock.now() - start,
                jitter: jitter, now: clock.wallTime())
            {
            case .retry(let delay):
                statistics.add("retries")
                try await clock.sleep(seconds: delay)
            case .giveUp:
                return response
            }
        }
    }

    /// How FCM answered the changes of a paced request sent with `resultsPerChange`, one by one.
    package func tally(_ tally: RateLimiter.Tally) { limiter?.record(tally) }
}

/// A request's headers with `Authorization: Bearer <token>` added, made once per token and header list rather
/// than once per request: the same strings each time also let the transport see at a glance that a request's
/// headers are the last one's.
final class BearerHeader: Sendable {
    private struct Made {
        var token: String
        var base: [(String, String)]
        var headers: [(String, String)]
    }

    private let last = Mutex<Made?>(nil)

    func headers(_ base: [(String, String)], token: String) -> [(String, String)] {
        last.withLock { last in
            if let made = last, made.token == token, HTTPRequest.sameHeaders(made.base, base) { return made.headers }
            let headers = base + [("Authorization", "Bearer \(token)")]
            last = Made(token: token, base: base, headers: headers)
            return headers
        }
    }
}
