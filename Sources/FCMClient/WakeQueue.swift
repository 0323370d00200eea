import Foundation
import Synchronization

/// Tasks waiting for a moment, let go by one sleeping task instead of a timer each. On Linux every
/// `Task.sleep` arms its own timer; thousands a second of them (a paced apply) cost more CPU than the
/// work they delay. Here one sleeper wakes at the earliest due time and releases everyone due within
/// `tick` of it.
package final class WakeQueue: Sendable {
    struct Waiter {
        var due: Double
        var continuation: CheckedContinuation<Void, Never>
    }

    private let tick: Double
    private let now: @Sendable () -> Double
    private let sleep: @Sendable (Double) async -> Void
    private struct State {
        var waiters: [Waiter] = []
        /// Waiters before this index have been released (removed in bulk, not one by one).
        var first = 0
        var sleeping = false
    }

    private let state = Mutex(State())
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
            let startSleeper: Bool = state.withLock { state in
                // Due times mostly arrive in order: the place is found from the back.
                var index = state.waiters.count
                while index > state.first, state.waiters[index - 1].due > due { index -= 1 }
                state.waiters.insert(Waiter(due: due, continuation: continuation), at: index)
                defer { state.sleeping = true }
                return !state.sleeping
            }
            if startSleeper { Task(executorPreference: executor) { await self.release() } }
        }
    }

    /// Lets every waiter go now (the run is stopping).
    package func releaseAll() {
        let all: [CheckedContinuation<Void, Never>] = state.withLock { state in
            defer {
                state.waiters.removeAll(keepingCapacity: true)
                state.first = 0
            }
            return state.waiters[state.first...].map(\.continuation)
        }
        for continuation in all { continuation.resume() }
    }

    private func release() async {
        while true {
            let next: Double? = state.withLock { state in
                guard state.first < state.waiters.count else {
                    state.waiters.removeAll(keepingCapacity: true)
                    state.first = 0
                    state.sleeping = false
                    return nil
                }
                return state.waiters[state.first].due
            }
            guard let next else { return }
            let wait = next - now()
            if wait > 0 { await sleep(wait) }
            let horizon = now() + tick
            let due: [CheckedContinuation<Void, Never>] = state.withLock { state in
                var released: [CheckedContinuation<Void, Never>] = []
                while state.first < state.waiters.count, state.waiters[state.first].due <= horizon {
                    released.append(state.waiters[state.first].continuation)
                    state.first += 1
                }
                if state.first > 4096, state.first * 2 > state.waiters.count {
                    state.waiters.removeFirst(state.first)
                    state.first = 0
                }
                return released
            }
            for continuation in due { continuation.resume() }
        }
    }
}
