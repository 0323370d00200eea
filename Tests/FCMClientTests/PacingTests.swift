import FCMClient
import Foundation
import Testing

@Suite struct RateLimiterTests {
    @Test func pacesToTheConfiguredRate() async throws {
        let clock = ManualPacingClock()
        let limiter = RateLimiter(perSecond: 100, clock: clock)
        for _ in 0..<1000 { try await limiter.acquire() }
        // 1000 changes at 100/s, the first ones from 0.1 s of saved-up rate: the last leaves at 9.89 s.
        #expect(abs(clock.now() - 9.89) < 0.001)
    }

    @Test func batchesLargerThanTheBurstPayBack() async throws {
        let clock = ManualPacingClock()
        let limiter = RateLimiter(perSecond: 1000, clock: clock)
        for _ in 0..<5 { try await limiter.acquire(1000) }
        // Each batch books a second of rate; the first starts 0.1 s early from saved-up rate.
        #expect(abs(clock.now() - 3.9) < 0.001, "the fifth batch of 1000 at 1000/s leaves at 3.9 s")
    }

    @Test func penaltiesSlowDownOncePerSecondAndRecover() async throws {
        let clock = ManualPacingClock()
        let limiter = RateLimiter(perSecond: 300, clock: clock)
        await limiter.penalize()
        await limiter.penalize()
        #expect(await limiter.rate == 200, "a burst of 429s counts once")
        clock.advance(1.5)
        await limiter.penalize()
        // A new penalty takes a third of the current rate; the quiet time before it earns nothing back.
        #expect(abs(await limiter.rate - 200 * 2 / 3) < 0.001)
        clock.advance(20)
        try await limiter.acquire()
        #expect(await limiter.rate == 300, "back to the configured rate after quiet seconds")
    }

    @Test func zeroMeansUnpaced() async throws {
        let clock = ManualPacingClock()
        let limiter = RateLimiter(perSecond: 0, clock: clock)
        for _ in 0..<10_000 { try await limiter.acquire() }
        #expect(clock.now() == 0)
    }
}

@Suite struct TokenCacheTests {
    @Test func concurrentCallersShareOneRefresh() async throws {
        let clock = ManualPacingClock()
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
        let clock = ManualPacingClock()
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
        try CredentialResolver.resolve(environment: environment, fileExists: { files[$0] != nil }, readFile: { files[$0] })
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
        let external = #"{"type": "external_account"}"#
        do {
            _ = try resolve(["GOOGLE_APPLICATION_CREDENTIALS": "/x.json"], files: ["/x.json": external])
            Issue.record("external_account should be refused")
        } catch {
            #expect("\(error)".contains("'external_account' are not supported"))
        }
    }
}
