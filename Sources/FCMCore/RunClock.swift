import Foundation
import Synchronization

/// The one clock of a run: retries, backoff, pacing, leases, deprecation notices and progress all ask it, so
/// tests move time by hand (`ManualClock`) instead of waiting for it.
package protocol RunClock: Sendable {
    /// Seconds on a monotonic scale.
    func now() -> Double
    func sleep(seconds: Double) async throws
    /// Wall-clock time: Retry-After given as an HTTP date, lock ages, turndown dates.
    func wallTime() -> Date
    /// Returns once `now()` reaches `moment`: a deadline (`apply --timeout`), which, unlike `sleep`, spends no
    /// time of its own; on a manual clock it passes only when the run's sleeps (or the test) move time past it.
    func wait(until moment: Double) async throws
}

extension RunClock {
    package func wait(until moment: Double) async throws { try await sleep(seconds: moment - now()) }

    /// Seconds from `start` (a `now()` reading) to now.
    package func seconds(since start: Double) -> Double { now() - start }
}

package struct SystemClock: RunClock {
    package init() {}

    package func now() -> Double {
        (ContinuousClock.now - ContinuousClock.Instant.zeroReference).seconds
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
package final class ManualClock: RunClock {
    private struct State {
        var current: Double
        var slept: [Double] = []
        /// Tasks waiting for a moment, by number.
        var waiting: [Int: (moment: Double, continuation: CheckedContinuation<Void, any Error>)] = [:]
        var nextNumber = 0

        /// Takes out the waiters whose moment has come.
        mutating func due() -> [CheckedContinuation<Void, any Error>] {
            let numbers = waiting.filter { $0.value.moment <= current }.map(\.key)
            return numbers.compactMap { waiting.removeValue(forKey: $0)?.continuation }
        }
    }

    private let state: Mutex<State>
    private let wallStart: Date

    package init(start: Double = 0, wallStart: Date = Date(timeIntervalSince1970: 1_800_000_000)) {
        state = Mutex(State(current: start))
        self.wallStart = wallStart
    }

    package func now() -> Double { state.withLock { $0.current } }

    package func sleep(seconds: Double) async throws {
        let due = state.withLock {
            $0.slept.append(seconds)
            $0.current += max(0, seconds)
            return $0.due()
        }
        for continuation in due { continuation.resume() }
    }

    package func wait(until moment: Double) async throws {
        let number = state.withLock { state in
            state.nextNumber += 1
            return state.nextNumber
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let ready: Bool = state.withLock {
                    guard moment > $0.current, !Task.isCancelled else { return true }
                    $0.waiting[number] = (moment, continuation)
                    return false
                }
                if ready { continuation.resume() }
            }
        } onCancel: {
            state.withLock { $0.waiting.removeValue(forKey: number) }?.continuation.resume(throwing: CancellationError())
        }
        try Task.checkCancellation()
    }

    package func wallTime() -> Date { wallStart.addingTimeInterval(now()) }

    package func advance(_ seconds: Double) {
        let due = state.withLock {
            $0.current += seconds
            return $0.due()
        }
        for continuation in due { continuation.resume() }
    }

    /// Every sleep requested so far, in order.
    package var sleeps: [Double] { state.withLock { $0.slept } }
}
