/// Paces subscription changes to a project's quota: one limiter per project, shared by every request in
/// flight. Each caller reserves the next free slot and sleeps once until it (a virtual schedule, as in
/// GCRA), so hundreds of waiting requests cost one wake-up each rather than polling a bucket. Up to
/// `burstSeconds` of unused rate may be spent at once. When FCM answers 429 anyway (another client
/// shares the quota, or the quota is lower than configured) the rate drops by a third, then creeps back
/// to the configured rate while no 429 is seen.
package actor RateLimiter {
    package let configuredRate: Double
    package private(set) var rate: Double
    private var nextFree: Double
    private var lastPenalty: Double = -.infinity
    private var lastRecovery: Double
    private let clock: any PacingClock
    private let burstSeconds: Double

    /// `perSecond` 0 or less means unlimited.
    package init(perSecond: Double, clock: any PacingClock, burstSeconds: Double = 0.1) {
        configuredRate = perSecond
        rate = perSecond
        self.clock = clock
        self.burstSeconds = burstSeconds
        let now = clock.now()
        nextFree = now - burstSeconds
        lastRecovery = now
    }

    /// Waits until `cost` changes may be sent.
    package func acquire(_ cost: Double = 1) async throws {
        let delay = reserve(cost)
        if delay > 0 { try await clock.sleep(seconds: delay) }
    }

    /// Books the next slot and returns how long to wait for it.
    func reserve(_ cost: Double) -> Double {
        guard configuredRate > 0 else { return 0 }
        let now = clock.now()
        recover(now)
        let start = max(nextFree, now - burstSeconds)
        nextFree = start + cost / rate
        return max(0, start - now)
    }

    /// A 429 arrived: slow down, at most once per second so a burst of 429s from requests already in
    /// flight counts once.
    package func penalize() {
        guard configuredRate > 0 else { return }
        let now = clock.now()
        guard now - lastPenalty >= 1 else { return }
        lastPenalty = now
        rate = max(configuredRate * 0.1, rate * 2 / 3)
        nextFree = max(nextFree, now)  // no burst right after a refusal
    }

    /// Regains 10% of the configured rate per quiet second (none in the second after a penalty).
    private func recover(_ now: Double) {
        let elapsed = max(0, now - lastRecovery)
        lastRecovery = now
        guard rate < configuredRate, now - lastPenalty > 1 else { return }
        rate = min(configuredRate, rate + configuredRate * 0.1 * elapsed)
    }
}
