import Foundation

/// Time as the retry and pacing code sees it, injected so tests run instantly and deterministically.
package protocol PacingClock: Sendable {
    /// Seconds on a monotonic scale.
    func now() -> Double
    func sleep(seconds: Double) async throws
    /// Wall-clock time, for Retry-After given as an HTTP date.
    func wallTime() -> Date
}

package struct SystemPacingClock: PacingClock {
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

/// The system clock, sleeping on a libcurl transport's worker loop (see `CurlTransport.sleep`).
package struct TransportPacingClock: PacingClock {
    let transport: CurlTransport

    package init(transport: CurlTransport) { self.transport = transport }

    package func now() -> Double { SystemPacingClock().now() }

    package func sleep(seconds: Double) async throws {
        await transport.sleep(seconds: seconds)
        try Task.checkCancellation()
    }

    package func wallTime() -> Date { Date() }
}

extension ContinuousClock.Instant {
    /// A fixed point to measure from: the first instant anyone asked for.
    static let zeroReference = ContinuousClock.now
}

/// A clock that advances only when slept on: sleeping returns at once with time moved forward.
package final class ManualPacingClock: PacingClock, @unchecked Sendable {
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

/// Randomness for jitter, injected like the clock.
package protocol JitterSource: Sendable {
    /// Uniform in [0, 1).
    func unit() -> Double
}

package struct SystemJitter: JitterSource {
    package init() {}
    package func unit() -> Double { Double.random(in: 0..<1) }
}

/// Returns the given values in turn (then repeats the last): deterministic jitter for tests.
package final class FixedJitter: JitterSource, @unchecked Sendable {
    private let lock = NSLock()
    private var values: [Double]

    package init(_ values: [Double]) { self.values = values }

    package func unit() -> Double {
        lock.withLock { values.count > 1 ? values.removeFirst() : (values.first ?? 0.5) }
    }
}
