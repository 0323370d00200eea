import FCMClient
import FCMCore
import Foundation
import Synchronization
import Testing

@Suite struct RateLimiterTests {
    @Test func pacesToTheConfiguredRate() async throws {
        let clock = ManualClock()
        let limiter = RateLimiter(perSecond: 100, clock: clock)
        for _ in 0..<1000 { try await limiter.acquire() }
        // 1000 changes at 100/s, the first ones from 0.1 s of saved-up rate: the last leaves at 9.89 s.
        #expect(abs(clock.now() - 9.89) < 0.001)
    }

    @Test func batchesLargerThanTheBurstPayBack() async throws {
        let clock = ManualClock()
        let limiter = RateLimiter(perSecond: 1000, clock: clock)
        for _ in 0..<5 { try await limiter.acquire(1000) }
        // Each batch books a second of rate; the first starts 0.1 s early from saved-up rate.
        #expect(abs(clock.now() - 3.9) < 0.001, "the fifth batch of 1000 at 1000/s leaves at 3.9 s")
    }

    /// Answers at `perSecond` for `seconds`, every `refusedEvery`-th a 429 (0: none).
    func answer(_ limiter: RateLimiter, _ clock: ManualClock, perSecond: Int, seconds: Double, refusedEvery: Int) {
        let count = Int(Double(perSecond) * seconds)
        for index in 1...count {
            clock.advance(1 / Double(perSecond))
            limiter.record(refused: refusedEvery > 0 && index % refusedEvery == 0)
        }
    }

    @Test func aQuotaWallDropsTheRateBelowWhatWasAccepted() async throws {
        let clock = ManualClock()
        let limiter = RateLimiter(perSecond: 100_000, clock: clock)
        // FCM accepts 3,000 changes a second; whatever is sent beyond is refused.
        let lowest = try await paced(limiter, clock, seconds: 2) { index, rate in
            Double(index % 1000) < max(0, (rate - 3000) / rate) * 1000 ? .refused : .accepted
        }
        #expect(lowest < 3000 && lowest > 2500, "90 % of the accepted 3,000/s, not a fixed fraction of 100,000: \(lowest)")
        #expect(limiter.rate < 3000 * 1.05, "no further than 1 % a second above it since: \(limiter.rate)")
        #expect(abs(limiter.floor - 300) < 15, "a tenth of the wall, not of the configured 100,000: \(limiter.floor)")
    }

    @Test func theFirstAnswerAfterAQuietSpellIsNotAWindowOfItsOwn() async throws {
        let clock = ManualClock()
        let limiter = RateLimiter(perSecond: 2500, clock: clock)
        // Seconds of refreshing send nothing paced; then the first change is refused, the rest accepted.
        clock.advance(12)
        limiter.record(refused: true)
        answer(limiter, clock, perSecond: 2500, seconds: 2, refusedEvery: 0)
        #expect(limiter.rate == 2500, "one 429 among the first thousand answers is not a wall: \(limiter.rate)")
    }

    @Test func scatteredRefusalsAreNotAWall() async throws {
        let clock = ManualClock()
        let limiter = RateLimiter(perSecond: 2500, clock: clock)
        // One answer in twenty refused at random places, for a minute: the rate never moves.
        answer(limiter, clock, perSecond: 2500, seconds: 60, refusedEvery: 20)
        #expect(limiter.rate == 2500)
    }

    @Test func theRateClimbsBackAfterAWallWhileItIsUsed() async throws {
        let clock = ManualClock()
        let limiter = RateLimiter(perSecond: 1000, clock: clock)
        answer(limiter, clock, perSecond: 1000, seconds: 1, refusedEvery: 2)
        let cut = limiter.rate
        #expect(cut > 440 && cut < 460, "half refused: 90 % of the accepted 500/s, got \(cut)")
        answer(limiter, clock, perSecond: 400, seconds: 5, refusedEvery: 0)
        #expect(limiter.rate == cut, "answers nobody booked through the limiter say nothing about its rate")
        // Requests paced by the limiter itself (the clock moves as they wait): the rate is what holds them back.
        for _ in 0..<2500 {
            try await limiter.acquire()
            limiter.record(refused: false)
        }
        #expect(limiter.rate > cut * 1.04, "climbing while used and nothing is refused: \(limiter.rate)")
        for _ in 0..<40000 {
            try await limiter.acquire()
            limiter.record(refused: false)
        }
        #expect(limiter.rate > 800 && limiter.rate <= 1000, "back near, never above, the configured rate: \(limiter.rate)")
    }

    /// Paced answers for `seconds` of the manual clock: each request waits for its slot (so answers come at
    /// whatever rate the limiter allows), then gets `answer(index, rate)`. Returns the lowest rate seen.
    func paced(
        _ limiter: RateLimiter, _ clock: ManualClock, seconds: Double, _ answer: (Int, Double) -> RateLimiter.Answer
    ) async throws -> Double {
        let end = clock.now() + seconds
        var lowest = limiter.rate
        var index = 0
        while clock.now() < end {
            try await limiter.acquire()
            index += 1
            limiter.record(answer(index, limiter.rate))
            lowest = min(lowest, limiter.rate)
        }
        return lowest
    }

    /// One answer in ten a 429 and two a 503, spread evenly: errors that do not depend on the rate.
    static func mixed(_ index: Int, _ rate: Double) -> RateLimiter.Answer {
        switch index % 10 {
        case 0: .refused
        case 3, 7: .serverError
        default: .accepted
        }
    }

    @Test func errorsAtRandomCutTheRateOnceAndNoMore() async throws {
        let clock = ManualClock()
        let limiter = RateLimiter(perSecond: 2500, clock: clock)
        let lowest = try await paced(limiter, clock, seconds: 120, Self.mixed)
        // One cut, by the 20 % share of server errors (the 429s alone would cut less: to 90 % of the 90 % not
        // refused), then the errors are seen not to follow the rate.
        #expect(abs(lowest - 2000) < 20, "\(lowest)")
        #expect(limiter.rate == lowest, "a share that a cut did not lower holds the rate where it is: \(limiter.rate)")
        #expect(lowest >= 250 && limiter.floor == 250)
    }

    @Test func nearlyHalfTheAnswersFailingStillKeepsATenthOfTheRate() async throws {
        let clock = ManualClock()
        let limiter = RateLimiter(perSecond: 3000, clock: clock)
        // 49 % errors: 29 % 429 and 20 % 5xx, all the time.
        let lowest = try await paced(limiter, clock, seconds: 120) { index, _ in
            let slot = index % 100
            return slot < 29 ? .refused : slot < 49 ? .serverError : .accepted
        }
        #expect(lowest >= 300, "\(lowest)")
    }

    @Test func serverErrorsSlowTheRateAndItRecoversWhenTheyStop() async throws {
        let clock = ManualClock()
        let limiter = RateLimiter(perSecond: 1000, clock: clock)
        let lowest = try await paced(limiter, clock, seconds: 30) { index, _ in index % 5 == 0 ? .serverError : .accepted }
        #expect(abs(lowest - 800) < 5, "a window of 20 % 5xx lowers the rate by a fifth, once: \(lowest)")
        _ = try await paced(limiter, clock, seconds: 30) { _, _ in .accepted }
        #expect(limiter.rate == 1000, "clean answers climb back to the configured rate: \(limiter.rate)")
    }

    @Test func aServerThatRecoversWhenSlowedIsSlowedUntilItDoes() async throws {
        let clock = ManualClock()
        let limiter = RateLimiter(perSecond: 1000, clock: clock)
        // An overloaded backend that copes with 400 changes a second: whatever is sent beyond fails.
        let lowest = try await paced(limiter, clock, seconds: 20) { index, rate in
            let failing = max(0, (rate - 400) / rate)
            return Double(index % 100) < failing * 100 ? .serverError : .accepted
        }
        #expect(lowest <= 420 && lowest >= 100, "cut while cutting lowers the errors: \(lowest)")
    }

    @Test func errorsJustAroundTheThresholdDoNotRatchetTheRateDown() async throws {
        let clock = ManualClock()
        let limiter = RateLimiter(perSecond: 2500, clock: clock)
        // 5 % 429 and, in turn, 10 % or 6 % 5xx a window: above the threshold, then just below it, for two minutes
        // (120 returns above it).
        var window = 0
        var windowStart = clock.now()
        let lowest = try await paced(limiter, clock, seconds: 120) { index, _ in
            if clock.now() - windowStart >= 0.5 {
                window += 1
                windowStart = clock.now()
            }
            let slot = index % 100
            return slot < 5 ? .refused : slot < (window % 2 == 0 ? 15 : 11) ? .serverError : .accepted
        }
        #expect(lowest > 2000, "one cut for the 10 %, not one per return above the threshold: \(lowest)")
    }

    @Test func aStoppingRunReleasesEveryWaiter() async throws {
        let clock = ManualClock()
        let limiter = RateLimiter(perSecond: 10, clock: clock, burstSeconds: 0)
        for _ in 0..<5 { try await limiter.acquire() }
        let before = clock.now()
        limiter.releaseAll()
        for _ in 0..<1000 { try await limiter.acquire() }
        #expect(clock.now() == before, "no slot is waited for once the run stops")
    }

    @Test func manyWaitersShareOneSleeper() async throws {
        let clock = ManualClock()
        let limiter = RateLimiter(perSecond: 1000, clock: clock, burstSeconds: 0)
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<400 { group.addTask { try? await limiter.acquire() } }
        }
        // 400 slots over 0.4 s released a tick (25 ms) at a time: about sixteen sleeps, not four hundred.
        #expect(clock.sleeps.count <= 100, "\(clock.sleeps.count) sleeps")
        #expect(
            clock.now() > 0.399 - RateLimiter.tick - 0.001 && clock.now() <= 0.3991,
            "the last slot is at 0.399 s, released at most a tick early: \(clock.now())")
    }

    /// As in a live run, paced callers and the limiter's sleeper run on the transport's worker and sleep on its
    /// loop; time moves only by what was slept, so no booking can find its slot already past.
    @Test(arguments: CurlTransport.Loop.allCases) func pacedCallersOnTheWorkerLeaveInTheOrderTheyBooked(loop: CurlTransport.Loop) async throws {
        final class Log: Sendable {
            let booked = Mutex(0)
            let left = Mutex<[Int]>([])
        }
        let transport = try CurlTransport(options: .init(loop: loop))
        defer { transport.shutdown() }
        let clock = WorkerSleepClock(transport: transport)
        let limiter = RateLimiter(perSecond: 1000, clock: clock, burstSeconds: 0, executor: transport)
        let log = Log()
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<60 {
                group.addTask(executorPreference: transport) {
                    // The worker runs one job at a time: nothing books between taking a number and booking a slot.
                    let number = log.booked.withLock { count in
                        defer { count += 1 }
                        return count
                    }
                    try? await limiter.acquire()
                    log.left.withLock { $0.append(number) }
                }
            }
        }
        // 60 slots a millisecond apart, released a tick (25 ms) at a time by several sleeps on the loop.
        #expect(log.left.withLock { $0 } == Array(0..<60))
        #expect(clock.slept >= 0.059 - RateLimiter.tick)
    }

    @Test func zeroMeansUnpaced() async throws {
        let clock = ManualClock()
        let limiter = RateLimiter(perSecond: 0, clock: clock)
        for _ in 0..<10_000 { try await limiter.acquire() }
        #expect(clock.now() == 0)
    }
}

@Suite struct TokenCacheTests {
    @Test func concurrentCallersShareOneRefresh() async throws {
        let clock = ManualClock()
        let counter = Counter()
        let provider = CachedTokenProvider(clock: clock) {
            try await Task.sleep(for: .milliseconds(20))
            return ("token-\(counter.next())", 3600)
        }
        let tokens = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<50 { group.addTask { try await provider.token() } }
            return try await group.reduce(into: [String]()) { $0.append($1) }
        }
        #expect(Set(tokens) == ["token-1"])
        #expect(counter.count == 1)
    }

    @Test func refreshesBeforeExpiryAndAfterInvalidation() async throws {
        let clock = ManualClock()
        let counter = Counter()
        let provider = CachedTokenProvider(clock: clock) { ("token-\(counter.next())", 3600) }
        #expect(try await provider.token() == "token-1")
        clock.advance(3000)
        #expect(try await provider.token() == "token-1", "still more than five minutes left")
        clock.advance(400)
        #expect(try await provider.token() == "token-2", "refreshed five minutes before expiry")
        await provider.invalidate("token-2")
        #expect(try await provider.token() == "token-3")
    }
}

@Suite struct CredentialResolverTests {
    let serviceAccount = #"{"type": "service_account", "client_email": "a@b", "private_key": "x"}"#
    let user = #"{"type": "authorized_user", "client_id": "c", "client_secret": "s", "refresh_token": "r"}"#

    func resolve(_ environment: [String: String], files: [String: String] = [:]) throws -> CredentialSource {
        try CredentialResolver.resolve(
            environment: environment, fileExists: { files[$0] != nil }, readFile: { files[$0] }, metadataAnswers: { _ in false })
    }

    @Test func applicationDefaultCredentialsOrder() throws {
        let files = ["/keys/sa.json": serviceAccount, "/home/u/.config/gcloud/application_default_credentials.json": user]
        #expect(try resolve(["FCM_EMULATOR_HOST": "127.0.0.1:9", "FCM_ACCESS_TOKEN": "t"], files: files) == .emulator(host: "127.0.0.1:9"))
        #expect(try resolve(["FCM_ACCESS_TOKEN": "t", "GOOGLE_APPLICATION_CREDENTIALS": "/keys/sa.json"], files: files) == .accessToken)
        #expect(
            try resolve(["GOOGLE_APPLICATION_CREDENTIALS": "/keys/sa.json", "HOME": "/home/u"], files: files)
                == .serviceAccount(path: "/keys/sa.json"))
        #expect(
            try resolve(["HOME": "/home/u", "GCE_METADATA_HOST": "m:1"], files: files)
                == .authorizedUser(path: "/home/u/.config/gcloud/application_default_credentials.json"))
        #expect(try resolve(["HOME": "/elsewhere", "GCE_METADATA_HOST": "m:1"], files: files) == .metadataServer(host: "m:1"))
        #expect(
            try resolve(["CLOUDSDK_CONFIG": "/cfg"], files: ["/cfg/application_default_credentials.json": serviceAccount])
                == .serviceAccount(path: "/cfg/application_default_credentials.json"))
    }

    @Test func problemsAreExplained() {
        #expect(throws: CredentialError.self) { try resolve(["GOOGLE_APPLICATION_CREDENTIALS": "/missing.json"]) }
        #expect(throws: CredentialError.self) { try resolve(["HOME": "/nowhere"]) }
        let gdch = #"{"type": "gdch_service_account"}"#
        do {
            _ = try resolve(["GOOGLE_APPLICATION_CREDENTIALS": "/x.json"], files: ["/x.json": gdch])
            Issue.record("gdch_service_account should be refused")
        } catch {
            #expect("\(error)".contains("'gdch_service_account' are not supported"))
        }
    }
}

/// Sleeps on a transport's worker loop, but measures time by what was slept alone.
final class WorkerSleepClock: RunClock, @unchecked Sendable {
    private let transport: CurlTransport
    private let manual = ManualClock()

    init(transport: CurlTransport) { self.transport = transport }

    /// Seconds slept so far.
    var slept: Double { manual.now() }

    func now() -> Double { manual.now() }

    func sleep(seconds: Double) async throws {
        await transport.sleep(seconds: seconds)
        manual.advance(seconds)
    }

    func wallTime() -> Date { manual.wallTime() }
}
