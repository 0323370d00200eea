import Foundation

/// Decides, request by request, which faults and quota refusals to apply. Randomness comes from a
/// seeded generator, so a run with `--seed` and a serial client injects the same faults every time.
actor FaultInjector {
    private(set) var faults: FaultSettings
    private(set) var quotas: QuotaSettings
    private var random: SplitMix64
    private var subscriptionBucket: TokenBucket
    private var messageBucket: TokenBucket

    init(faults: FaultSettings, quotas: QuotaSettings, seed: UInt64) {
        self.faults = faults
        self.quotas = quotas
        random = SplitMix64(seed: seed)
        subscriptionBucket = TokenBucket(perSecond: quotas.subscriptionQPS, burstSeconds: 1)
        messageBucket = TokenBucket(perSecond: quotas.messagesPerMinute / 60, burstSeconds: 60)
    }

    func replace(faults: FaultSettings) { self.faults = faults }

    func replace(quotas: QuotaSettings) {
        self.quotas = quotas
        subscriptionBucket = TokenBucket(perSecond: quotas.subscriptionQPS, burstSeconds: 1)
        messageBucket = TokenBucket(perSecond: quotas.messagesPerMinute / 60, burstSeconds: 60)
    }

    enum Verdict: Sendable {
        case proceed(delayMs: Double)
        case fail(InjectedFault, delayMs: Double)
        case drop(delayMs: Double)
        /// Make the change, then cut the connection before the reply: the client cannot know it happened.
        case commitThenDrop(delayMs: Double)
        case quotaExceeded(delayMs: Double)
    }

    /// `cost` is the number of subscription changes (or messages) the request would make.
    func decide(_ endpoint: Endpoint, registrations: [String], cost: Int) -> Verdict {
        let delay = faults.latencyMs + (faults.jitterMs > 0 ? random.nextUnit() * faults.jitterMs : 0)
        if let failing = registrations.lazy.compactMap({ self.faults.failingRegistrations[$0] }).first {
            return .fail(failing, delayMs: delay)
        }
        if faults.dropRate > 0, random.nextUnit() < faults.dropRate { return .drop(delayMs: delay) }
        for rate in faults.errorRates where rate.endpoint == nil || rate.endpoint == endpoint.rawValue {
            if random.nextUnit() < rate.rate { return .fail(rate.fault, delayMs: delay) }
        }
        let now = ContinuousClock.now
        if endpoint.changesSubscriptions, quotas.subscriptionQPS > 0, !subscriptionBucket.take(Double(cost), at: now) {
            return .quotaExceeded(delayMs: delay)
        }
        if endpoint == .messagesSend, quotas.messagesPerMinute > 0, !messageBucket.take(Double(cost), at: now) {
            return .quotaExceeded(delayMs: delay)
        }
        if endpoint.isMutating {
            for rate in faults.dropAfterCommit where rate.endpoint == nil || rate.endpoint == endpoint.rawValue {
                if random.nextUnit() < rate.rate { return .commitThenDrop(delayMs: delay) }
            }
        }
        return .proceed(delayMs: delay)
    }

    /// The tokens of one IID batch of `count` (by position) that fail on their own, and with what code. Drawn
    /// from the same seeded generator, token by token, so a serial client meets the same ones every run.
    func tokenErrors(_ endpoint: Endpoint, count: Int) -> [Int: String] {
        let rates = faults.iidTokenErrors.filter { $0.endpoint == nil || $0.endpoint == endpoint.rawValue }
        guard !rates.isEmpty else { return [:] }
        var errors: [Int: String] = [:]
        for index in 0..<count {
            for rate in rates where random.nextUnit() < rate.rate {
                errors[index] = rate.error
                break
            }
        }
        return errors
    }
}

/// Allows `perSecond` on average with bursts of up to `burstSeconds` worth; refills continuously.
struct TokenBucket {
    let perSecond: Double
    let capacity: Double
    private var tokens: Double
    private var last: ContinuousClock.Instant?

    init(perSecond: Double, burstSeconds: Double) {
        self.perSecond = perSecond
        capacity = max(1, perSecond * burstSeconds)
        tokens = capacity
    }

    mutating func take(_ amount: Double, at now: ContinuousClock.Instant) -> Bool {
        if let last {
            let elapsed = now - last
            tokens = min(capacity, tokens + elapsed.seconds * perSecond)
        }
        last = now
        guard tokens >= amount else { return false }
        tokens -= amount
        return true
    }
}

/// A small, fast, seedable generator (Steele et al.), so injected faults are reproducible.
struct SplitMix64 {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    mutating func nextUnit() -> Double { Double(next() >> 11) / Double(1 << 53) }
}
