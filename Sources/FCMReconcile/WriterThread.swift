import Dispatch
import FCMCore
import Foundation
import Synchronization

/// The thread a run's journal writes and progress output happen on. Both block (a `write(2)`, a terminal, an
/// `--events` file or pipe someone reads slowly); on the HTTP client's thread they would hold up every request
/// in flight, here they hold up only the task that waits for them. Serial: jobs run one at a time, in the
/// order they came, so journal writes keep their order.
///
/// Between jobs it calls `tick` every `interval`: the progress relay's flush, so a progress line costs the
/// requests nothing however often they settle.
package final class WriterThread: TaskExecutor, Sendable {
    private struct State {
        var jobs: [UnownedJob] = []
        /// The thread is about to wait, or waits: whoever queues a job must signal it.
        var idle = false
        var closed = false
        var finished = false
    }

    private let state = Mutex(State())
    /// Counts wake-ups, so one given between the check and the wait is not lost.
    private let wake = DispatchSemaphore(value: 0)
    private let interval: Duration
    private let tick: (@Sendable () -> Void)?
    private let name: String

    package init(name: String = "fcmctl-writer", interval: Duration = .milliseconds(50), tick: (@Sendable () -> Void)? = nil) {
        self.interval = interval
        self.tick = tick
        self.name = name
        // Named by the thread itself once `start` has returned: Foundation (Linux) names only a thread it has
        // finished starting, and an unnamed one keeps its creator's name (which `top -H`, perf and tests read).
        let started = DispatchSemaphore(value: 0)
        Thread { [self] in
            started.wait()
            Thread.current.name = name
            run()
        }
        .start()
        started.signal()
    }

    package func enqueue(_ job: consuming ExecutorJob) {
        let unowned = UnownedJob(job)
        let (accepted, signal) = state.withLock { state -> (Bool, Bool) in
            if state.finished { return (false, false) }
            state.jobs.append(unowned)
            let signal = state.idle
            state.idle = false
            return (true, signal)
        }
        // A job that comes after the thread ended (a task that outlived its run) still runs, elsewhere.
        if !accepted { globalConcurrentExecutor.enqueue(ExecutorJob(unowned)) }
        if signal { wake.signal() }
    }

    /// Lets the thread end once the jobs queued so far have run (a last tick with them).
    package func close() {
        let signal = state.withLock { state -> Bool in
            state.closed = true
            let signal = state.idle
            state.idle = false
            return signal
        }
        if signal { wake.signal() }
    }

    private func run() {
        let executor = asUnownedTaskExecutor()
        let clock = ContinuousClock()
        var nextTick = clock.now + interval
        while true {
            let (jobs, closing) = state.withLock { state -> ([UnownedJob], Bool) in
                let jobs = state.jobs
                state.jobs.removeAll(keepingCapacity: true)
                if jobs.isEmpty {
                    if state.closed { state.finished = true } else { state.idle = true }
                }
                return (jobs, state.closed)
            }
            for job in jobs { job.runSynchronously(on: executor) }
            if jobs.isEmpty && closing {
                tick?()
                return
            }
            if let tick, clock.now >= nextTick {
                tick()
                nextTick = clock.now + interval
            }
            guard jobs.isEmpty else { continue }
            if tick == nil {
                wake.wait()
            } else {
                let left = clock.now.duration(to: nextTick)
                _ = wake.wait(timeout: .now() + .nanoseconds(left.nanoseconds))
            }
            state.withLock { $0.idle = false }
        }
    }
}
