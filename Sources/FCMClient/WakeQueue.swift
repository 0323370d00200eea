import Foundation

/// Tasks waiting for a moment, let go by one sleeping task instead of a timer each. On Linux every
/// `Task.sleep` arms its own timer; thousands a second of them (a paced apply) cost more CPU than the
/// work they delay. Here one sleeper wakes at the earliest due time and releases everyone due within
/// `tick` of it.
package final class WakeQueue: @unchecked Sendable {
    struct Waiter {
        var due: Double
        var continuation: CheckedContinuation<Void, Never>
    }

    private let tick: Double
    private let now: @Sendable () -> Double
    private let sleep: @Sendable (Double) async -> Void
    private let lock = NSLock()
    private var waiters: [Waiter] = []
    private var first = 0
    private var sleeping = false
    /// Where the sleeper runs: the HTTP client's worker, so that the requests it releases go out from there.
    private let executor: (any TaskExecutor)?

    /// `now` in seconds on a monotonic scale; `sleep` waits that many seconds.
    package init(
        tick: Double, now: @escaping @Sendable () -> Double, sleep: @escaping @Sendable (Double) async -> Void,
        executor: (any TaskExecutor)? = nil
    ) {
        self.executor = executor
        self.tick = tick
        self.now = now
        self.sleep = sleep
    }

    /// Returns at `due` (up to `tick` early), or at once if it has passed.
    package func wait(until due: Double) async {
        guard due > now() else { return }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let startSleeper: Bool = lock.withLock {
                // Due times mostly arrive in order: the place is found from the back.
                var index = waiters.count
                while index > first, waiters[index - 1].due > due { index -= 1 }
                waiters.insert(Waiter(due: due, continuation: continuation), at: index)
                defer { sleeping = true }
                return !sleeping
            }
            if startSleeper { Task(executorPreference: executor) { await self.release() } }
        }
    }

    /// Lets every waiter go now (the run is stopping).
    package func releaseAll() {
        let all: [CheckedContinuation<Void, Never>] = lock.withLock {
            defer {
                waiters.removeAll(keepingCapacity: true)
                first = 0
            }
            return waiters[first...].map(\.continuation)
        }
        for continuation in all { continuation.resume() }
    }

    private func release() async {
        while true {
            let next: Double? = lock.withLock {
                guard first < waiters.count else {
                    waiters.removeAll(keepingCapacity: true)
                    first = 0
                    sleeping = false
                    return nil
                }
                return waiters[first].due
            }
            guard let next else { return }
            let wait = next - now()
            if wait > 0 { await sleep(wait) }
            let due: [CheckedContinuation<Void, Never>] = lock.withLock {
                let horizon = now() + tick
                var released: [CheckedContinuation<Void, Never>] = []
                while first < waiters.count, waiters[first].due <= horizon {
                    released.append(waiters[first].continuation)
                    first += 1
                }
                if first > 4096, first * 2 > waiters.count {
                    waiters.removeFirst(first)
                    first = 0
                }
                return released
            }
            for continuation in due { continuation.resume() }
        }
    }
}
