import Dispatch

/// Where lease renewals run: a serial dispatch queue of their own, not Swift's shared pool, so a run that
/// keeps the pool busy (blocking journal writes, or a test process full of commands) does not starve its
/// lease, which the fence holds it to.
final class LeaseExecutor: TaskExecutor {
    static let shared = LeaseExecutor()

    private let queue = DispatchQueue(label: "fcmctl-lease")

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        queue.async { job.runSynchronously(on: executor) }
    }
}
