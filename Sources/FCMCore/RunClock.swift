import Foundation

/// The one clock of a run: retries, backoff, pacing, leases, deprecation notices and progress all ask it, so
/// tests move time by hand (`ManualClock`) instead of waiting for it.
package protocol RunClock: Sendable {
    /// Seconds on a monotonic scale.
    func now() -> Double
    func sleep(seconds: Double) async throws
    /// Wall-clock time: Retry-After given as an HTTP date, lock ages, turndown dates.
    func wallTime() -> Date
}

extension RunClock {
    /// Seconds from `start` (a `now()` reading) to now.
    package func seconds(since start: Double) -> Double { now() - start }
}

package struct SystemClock: RunClock {
    package init() {}

    package func now() -> Double {
        let instant = ContinuousClock.now - ContinuousClock.Instant.zeroReference
        return Double(instant.components.seconds) + Double(instant.components.attoseconds) / 1e18
    }

    package func sleep(seconds: Double) async throws {
        guard seconds > 0 else { return }
        try await Task.sleep(for: .nanoseconds(Int64(seconds * 1e9)))
    }

    package func wallTime() -> Date { Date() }
}

extension ContinuousClock.Instant {
    /// A fixed point to measure from: the first instant anyone asked for.
    static let zeroReference = ContinuousClock.now
}

/// A clock that advances only when slept on: sleeping returns at once with time moved forward.
package final class ManualClock: RunClock, @unchecked Sendable {
    private let lock = NSLock()
    private var current: Double
    private var slept: [Double] = []
    private let wallStart: Date

    package init(start: Double = 0, wallStart: Date = Date(timeIntervalSince1970: 1_800_000_000)) {
        current = start
        self.wallStart = wallStart
    }

    package func now() -> Double { lock.withLock { current } }

    package func sleep(seconds: Double) async throws {
        lock.withLock {
            slept.append(seconds)
            current += max(0, seconds)
        }
    }

    package func wallTime() -> Date { lock.withLock { wallStart.addingTimeInterval(current) } }

    package func advance(_ seconds: Double) { lock.withLock { current += seconds } }

    /// Every sleep requested so far, in order.
    package var sleeps: [Double] { lock.withLock { slept } }
}
