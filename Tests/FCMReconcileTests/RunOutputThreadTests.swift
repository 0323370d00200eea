import Dispatch
import FCMCore
import FCMReconcile
import FCMState
import FCMTestSupport
import Foundation
import Synchronization
import Testing

/// Names of the threads things happened on, by what happened.
final class ThreadLog: Sendable {
    private let names = Mutex<[String: [String]]>([:])

    func note(_ what: String) {
        let name = Thread.current.name ?? "unnamed"
        names.withLock { $0[what, default: []].append(name) }
    }

    func threads(_ what: String) -> Set<String> { Set(names.withLock { $0[what] ?? [] }) }
}

/// A count several threads add to (the closures below cannot capture an `Atomic` itself).
final class Tally: Sendable {
    private let count = Atomic<Int>(0)

    func add(_ value: Int) { count.add(value, ordering: .relaxed) }
    var value: Int { count.load(ordering: .relaxed) }
}

/// A journal that notes the thread of every append, then appends to `inner`.
struct ThreadNotingJournal: StateJournal {
    let inner: any StateJournal
    let log: ThreadLog

    func append(_ entries: [JournalEntry]) async throws {
        log.note("journal")
        try await inner.append(entries)
    }

    var bytesWritten: Int { get async { await inner.bytesWritten } }
}

/// Answers every request at once, noting the thread it was asked on; `answered` counts registrations.
final class ThreadNotingService: TopicBatchService, Sendable {
    let log: ThreadLog
    let answered = Atomic<Int>(0)
    /// Signalled once `total` registrations were answered.
    let allAnswered = DispatchSemaphore(value: 0)
    let total: Int

    init(log: ThreadLog, total: Int) {
        self.log = log
        self.total = total
    }

    func performBatch(topic: String, action: SubscriptionChange.Action, _ registrations: [Registration]) async throws -> [Registration:
        SubscriptionOutcome]
    {
        log.note("request")
        count(registrations.count)
        return Dictionary(uniqueKeysWithValues: registrations.map { ($0, SubscriptionOutcome.done) })
    }

    func subscriptions(of registration: Registration) async throws -> RegistrationStatus {
        log.note("request")
        count(1)
        return .active(topics: [])
    }

    private func count(_ count: Int) {
        if answered.add(count, ordering: .relaxed).newValue == total { allAnswered.signal() }
    }

}

@Suite struct RunOutputThreadTests {
    static func registrations(_ count: Int) -> [Registration] {
        (0..<count).map { Registration(value: "t\($0):APA91b", kind: .token) }
    }

    /// The request thread stands for libcurl's worker: requests (and the recording of their answers) run
    /// there, journal writes and progress never do.
    @Test func journalWritesAndProgressRunOnTheWriterThreadNotTheRequestThread() async throws {
        let store = InMemoryStateStore()
        let base = try await store.write(Ledger(lineage: "L", serial: 1), replacing: nil)
        let log = ThreadLog()
        let journal = ThreadNotingJournal(inner: try await store.openJournal(base: base, expectedBytes: 800_000), log: log)
        let service = ThreadNotingService(log: log, total: 1000)
        let requestThread = WriterThread(name: "test-requests")
        defer { requestThread.close() }
        let reported = Tally()
        let plan = Plan(topics: [TopicChange(name: "news", ownership: .additive, added: Self.registrations(1000), removed: [], unchanged: 0)])
        let applier = Applier(service: service, limit: .fixed(16), window: 256, executor: requestThread) { count in
            log.note("progress")
            reported.add(count.settled)
        }
        let (report, ledger) = await applier.apply(plan, observed: ObservedState(), ledger: Ledger(lineage: "L", serial: 1), journal: journal)
        #expect(report.succeeded && ledger.managedSubscribers(of: "news").count == 1000)
        #expect(log.threads("request") == ["test-requests"])
        #expect(log.threads("journal") == ["fcmctl-writer"])
        #expect(log.threads("progress") == ["fcmctl-writer"])
        // Every settled operation was reported before apply returned.
        #expect(reported.value == 1000)
        #expect(try await store.read().ledger.topics == ledger.topics)
    }

    /// A progress reader that stops reading (a full pipe behind `--events -`) must not stop the requests:
    /// the callback below returns only once every request was answered.
    @Test func aBlockedProgressCallbackDoesNotHoldUpTheRequests() async throws {
        let store = InMemoryStateStore()
        let base = try await store.write(Ledger(lineage: "L", serial: 1), replacing: nil)
        let journal = try await store.openJournal(base: base, expectedBytes: 100_000)
        let log = ThreadLog()
        // Fewer operations than a window: every intent is written before the first request, so the blocked
        // writer thread holds up no intent.
        let service = ThreadNotingService(log: log, total: 200)
        let requestThread = WriterThread(name: "test-requests")
        defer { requestThread.close() }
        let waitedInVain = Tally()
        let plan = Plan(topics: [TopicChange(name: "news", ownership: .additive, added: Self.registrations(200), removed: [], unchanged: 0)])
        let applier = Applier(service: service, limit: .fixed(4), window: 256, executor: requestThread) { _ in
            if service.allAnswered.wait(timeout: .now() + .seconds(30)) == .timedOut {
                waitedInVain.add(1)
            } else {
                service.allAnswered.signal()
            }
        }
        let (report, _) = await applier.apply(plan, observed: ObservedState(), ledger: Ledger(lineage: "L", serial: 1), journal: journal)
        #expect(report.succeeded && report.operationsDone == 200)
        #expect(waitedInVain.value == 0)
    }

    @Test func refreshReportsProgressFromTheWriterThread() async throws {
        let log = ThreadLog()
        let service = ThreadNotingService(log: log, total: 300)
        let requestThread = WriterThread(name: "test-requests")
        defer { requestThread.close() }
        let reported = Tally()
        let refresher = Refresher(service: service, limit: .fixed(8), executor: requestThread) { count in
            log.note("progress")
            reported.add(count.settled)
        }
        let observed = try await refresher.refresh(groups: [], registrations: Set(Self.registrations(300)))
        #expect(observed.registrations.count == 300)
        #expect(log.threads("request") == ["test-requests"])
        #expect(log.threads("progress") == ["fcmctl-writer"])
        #expect(reported.value == 300)
    }
}
