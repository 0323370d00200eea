/// Paces subscription changes to a project's quota: one limiter per project, shared by every request in
/// flight. A token bucket refilled at the current rate; when FCM answers 429 anyway (another client
/// shares the quota, or the quota is lower than configured) the rate drops by a third, then creeps back to
/// the configured rate while no 429 is seen.
package actor RateLimiter {
    package let configuredRate: Double
    package private(set) var rate: Double
    private var tokens: Double
    private var last: Double
    private var lastPenalty: Double = -.infinity
    private let clock: any PacingClock
    private let burst: Double
    static let tolerance = 1e-6
    static let minimumWait = 1e-4

    /// `perSecond` 0 or less means unlimited.
    package init(perSecond: Double, clock: any PacingClock, burstSeconds: Double = 0.1) {
        configuredRate = perSecond
        rate = perSecond
        self.clock = clock
        burst = max(1, perSecond * burstSeconds)
        tokens = burst
        last = clock.now()
    }

    /// Waits until `cost` changes may be sent.
    package func acquire(_ cost: Double = 1) async throws {
        guard configuredRate > 0 else { return }
        while true {
            refill()
            // The tolerance matters: refills are floating point, and a wait for the last 1e-13 of a token
            // would be too small to move the clock, spinning forever.
            if tokens + Self.tolerance >= cost || (tokens + Self.tolerance >= burst && cost > burst) {
                tokens -= cost
                return
            }
            let wait = max((min(cost, burst) - tokens) / rate, Self.minimumWait)
            try await clock.sleep(seconds: wait)
        }
    }

    /// A 429 arrived: slow down, at most once per second so a burst of 429s from requests already in
    /// flight counts once.
    package func penalize() {
        guard configuredRate > 0 else { return }
        let now = clock.now()
        guard now - lastPenalty >= 1 else { return }
        lastPenalty = now
        refill()
        rate = max(configuredRate * 0.1, rate * 2 / 3)
        tokens = min(tokens, 0)
    }

    private func refill() {
        let now = clock.now()
        let elapsed = max(0, now - last)
        last = now
        // Recover 10% of the configured rate per second without a penalty.
        if rate < configuredRate, now - lastPenalty > 1 {
            rate = min(configuredRate, rate + configuredRate * 0.1 * elapsed)
        }
        tokens = min(burst, tokens + elapsed * rate)
    }
}
