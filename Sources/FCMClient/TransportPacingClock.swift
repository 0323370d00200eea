import FCMCore
import Foundation
import Synchronization

/// The system clock, sleeping on a libcurl transport's worker loop (see `CurlTransport.sleep`).
package struct TransportPacingClock: RunClock {
    let transport: CurlTransport

    package init(transport: CurlTransport) { self.transport = transport }

    package func now() -> Double { SystemClock().now() }

    package func sleep(seconds: Double) async throws {
        await transport.sleep(seconds: seconds)
        try Task.checkCancellation()
    }

    package func wallTime() -> Date { Date() }
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
package final class FixedJitter: JitterSource {
    private let values: Mutex<[Double]>

    package init(_ values: [Double]) { self.values = Mutex(values) }

    package func unit() -> Double {
        values.withLock { values in values.count > 1 ? values.removeFirst() : (values.first ?? 0.5) }
    }
}
