import FCMCore
import Synchronization

/// What a refresh or an apply writes as it goes, moved off the tasks that wait on requests: journal lines
/// and progress, both on one `WriterThread` of the run's own.
///
/// Progress is counted where operations settle (an atomic add) and handed to the callback from the writer
/// thread every tick, so a slow terminal or `--events` reader delays the progress line, not the requests.
/// Journal writes are awaited by the task that asks for them: write-ahead needs the intents durable before
/// their requests go, and the run's order of writes is the order it awaits them in.
package final class RunOutput: Sendable {
    private let thread: WriterThread
    private let relay: ProgressRelay?

    package init(progress: (@Sendable (ProgressCount) -> Void)?) {
        let relay = progress.map { ProgressRelay($0) }
        self.relay = relay
        var tick: (@Sendable () -> Void)?
        if let relay { tick = { relay.flush() } }
        thread = WriterThread(tick: tick)
    }

    /// Counts operations settled; the progress callback hears of them on the writer thread.
    package func advance(_ count: Int) {
        relay?.add(count)
    }

    /// Counts operations that failed (they are counted settled by `advance` too): a CI log says so as it goes.
    package func fail(_ count: Int) {
        relay?.fail(count)
    }

    /// Appends on the writer thread and returns once `journal` has the lines.
    package func append(_ entries: [JournalEntry], to journal: any StateJournal) async throws {
        // A task of its own that starts on the writer thread: a preference scope alone may run a body with no
        // suspension point where it was called.
        try await Task(executorPreference: thread) { try await journal.append(entries) }.value
    }

    /// Passes on the progress counted so far and lets the thread end: once this returns, the callback has
    /// heard of every operation and will hear nothing more from this run.
    package func finish() async {
        let relay = self.relay
        await Task(executorPreference: thread) { relay?.flush() }.value
        thread.close()
    }
}

/// Operations settled since the last report, and how many of them failed.
package struct ProgressCount: Sendable, Equatable {
    package var settled: Int
    package var failed: Int

    package init(settled: Int, failed: Int = 0) {
        self.settled = settled
        self.failed = failed
    }
}

/// Operations settled and not yet reported. An add is all a request's task pays; the writer thread reports.
final class ProgressRelay: Sendable {
    private let pending = Atomic<Int>(0)
    private let failed = Atomic<Int>(0)
    private let report: @Sendable (ProgressCount) -> Void

    init(_ report: @escaping @Sendable (ProgressCount) -> Void) {
        self.report = report
    }

    func add(_ count: Int) {
        pending.add(count, ordering: .relaxed)
    }

    func fail(_ count: Int) {
        failed.add(count, ordering: .relaxed)
    }

    func flush() {
        let count = ProgressCount(settled: pending.exchange(0, ordering: .relaxed), failed: failed.exchange(0, ordering: .relaxed))
        if count.settled > 0 || count.failed > 0 { report(count) }
    }
}
