import FCMReconcile
import Synchronization
import Testing

@Suite struct ConcurrencyLimitTests {
    final class ManualClock: Sendable {
        let seconds = Mutex(0.0)
        func advance(_ by: Double) { seconds.withLock { $0 += by } }
        var read: @Sendable () -> Double { { self.seconds.withLock { $0 } } }
    }

    /// Feeds answers as a server would send them with `limit` requests in flight: `rate(limit)` a second.
    func drive(_ limit: ConcurrencyLimit, clock: ManualClock, answers: Int, rate: (Int) -> Double) -> [Int] {
        var seen = [limit.current]
        for _ in 0..<answers {
            clock.advance(1 / rate(limit.current))
            let now = limit.answered()
            if now != seen.last { seen.append(now) }
        }
        return seen
    }

    @Test func aSlowServerGetsTheWholeParallelism() {
        // 50 ms of latency: every request more in flight is 20 more answers a second.
        let clock = ManualClock()
        let limit = ConcurrencyLimit(maximum: 512, initial: 32, now: clock.read)
        let steps = drive(limit, clock: clock, answers: 5_000, rate: { Double($0) / 0.05 })
        #expect(steps == [32, 64, 128, 256, 512])
    }

    @Test func aServerThatAnswersAtOnceKeepsFewInFlight() {
        // The server (or this process) is the bottleneck: more in flight brings no more answers.
        let clock = ManualClock()
        let limit = ConcurrencyLimit(maximum: 512, initial: 32, now: clock.read)
        let steps = drive(limit, clock: clock, answers: 100_000, rate: { _ in 14_000 })
        #expect(steps == [32, 64])
    }

    @Test func theLimitStopsWhereDoublingStopsPaying() {
        // Latency-bound up to 3,000 answers a second (a paced apply at --qps 3000, 50 ms): 150 in flight are enough.
        let clock = ManualClock()
        let limit = ConcurrencyLimit(maximum: 512, initial: 32, now: clock.read)
        let steps = drive(limit, clock: clock, answers: 50_000, rate: { min(3_000, Double($0) / 0.05) })
        #expect(steps == [32, 64, 128, 256])
    }

    @Test func aSlowSpellLaterDoesNotLowerIt() {
        let clock = ManualClock()
        let limit = ConcurrencyLimit(maximum: 512, initial: 32, now: clock.read)
        _ = drive(limit, clock: clock, answers: 5_000, rate: { Double($0) / 0.05 })
        let later = drive(limit, clock: clock, answers: 5_000, rate: { _ in 10 })
        #expect(later == [512])
    }

    @Test func aRoundLastsAtLeastFiftyMilliseconds() {
        // Answers in bursts a millisecond apart would double the limit on noise if a round could be that short.
        let clock = ManualClock()
        let limit = ConcurrencyLimit(maximum: 512, initial: 32, now: clock.read)
        var steps = [limit.current]
        for _ in 0..<40 {
            for _ in 0..<64 { if limit.answered() != steps.last { steps.append(limit.current) } }
            clock.advance(0.001)
        }
        #expect(steps == [32])
    }

    @Test func aFixedLimitNeverMoves() {
        let clock = ManualClock()
        let limit = ConcurrencyLimit(maximum: 16, initial: 16, now: clock.read)
        #expect(drive(limit, clock: clock, answers: 1_000, rate: { Double($0) / 0.05 }) == [16])
        #expect(ConcurrencyLimit.fixed(8).current == 8)
        #expect(ConcurrencyLimit(maximum: 4).current == 4)
    }

    @Test func boundedMapKeepsOrderAndNeverExceedsTheLimit() async throws {
        final class Gauge: Sendable {
            let state = Mutex((now: 0, most: 0))
        }
        let gauge = Gauge()
        let limit = ConcurrencyLimit.fixed(4)
        let results = try await BoundedConcurrency.map(Array(0..<200), limit: limit) { value in
            gauge.state.withLock {
                $0.now += 1
                $0.most = max($0.most, $0.now)
            }
            await Task.yield()
            gauge.state.withLock { $0.now -= 1 }
            return value * 2
        }
        #expect(results == (0..<200).map { $0 * 2 })
        let most = gauge.state.withLock { $0.most }
        #expect(most >= 1 && most <= 4)
    }
}
