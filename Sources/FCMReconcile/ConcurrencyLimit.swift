import FCMCore
import Synchronization

/// How many requests to keep in flight: at most `maximum` (`--parallelism`), starting lower and doubling
/// while doubling pays.
///
/// Against FCM's 50 ms of latency a run needs hundreds of requests in flight; against a server that answers
/// at once (the emulator, a proxy nearby) a few dozen keep it just as busy, and every one more is a
/// connection opened and kept, which curl looks through for each request. So the limit climbs in rounds:
/// a round lasts at least as many answers as the limit and `minimumRound` seconds, and when a round at twice the
/// limit of the one before brought less than `payoff` times its rate, the limit stays where it is. It never
/// comes down: a slow spell later in the run is not a reason to have fewer requests waiting on it.
package final class ConcurrencyLimit: Sendable {
    package let maximum: Int
    /// A round must last this long, so that its rate is not a few milliseconds of scheduling noise.
    package static let minimumRound = 0.05
    /// Doubling must bring this much more throughput to be worth another doubling.
    package static let payoff = 1.5

    private struct Gauge {
        var limit: Int
        var settled: Bool
        var roundStart: Double?
        var answers = 0
        /// Answers to let pass before a round starts: those of requests sent before the limit last rose.
        var settling = 0
        var previousRate: Double?
    }

    private let gauge: Mutex<Gauge>
    private let now: @Sendable () -> Double

    package init(maximum: Int, initial: Int = 32, now: @escaping @Sendable () -> Double = ConcurrencyLimit.monotonicSeconds) {
        self.maximum = max(1, maximum)
        let start = min(self.maximum, max(1, initial))
        gauge = Mutex(Gauge(limit: start, settled: start == self.maximum))
        self.now = now
    }

    /// A limit that never moves: `--parallelism` taken literally (tests, and in-memory fakes).
    package static func fixed(_ limit: Int) -> ConcurrencyLimit { ConcurrencyLimit(maximum: limit, initial: limit) }

    package var current: Int { gauge.withLock { $0.limit } }

    /// One request ended (answered or failed); returns the limit to fill up to now.
    @discardableResult
    package func answered() -> Int {
        gauge.withLock { gauge in
            guard !gauge.settled else { return gauge.limit }
            if gauge.settling > 0 {
                gauge.settling -= 1
                return gauge.limit
            }
            let time = now()
            guard let start = gauge.roundStart else {
                gauge.roundStart = time
                return gauge.limit
            }
            gauge.answers += 1
            let elapsed = time - start
            guard gauge.answers >= gauge.limit, elapsed >= Self.minimumRound else { return gauge.limit }
            let rate = Double(gauge.answers) / elapsed
            if let previous = gauge.previousRate, rate < previous * Self.payoff {
                gauge.settled = true
                return gauge.limit
            }
            gauge.previousRate = rate
            gauge.settling = gauge.limit
            gauge.limit = min(maximum, gauge.limit * 2)
            gauge.settled = gauge.limit == maximum
            gauge.roundStart = nil
            gauge.answers = 0
            return gauge.limit
        }
    }

    package static let monotonicSeconds: @Sendable () -> Double = {
        (ContinuousClock.now - origin).seconds
    }

    private static let origin = ContinuousClock.now
}
