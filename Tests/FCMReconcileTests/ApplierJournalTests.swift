import FCMCore
import FCMReconcile
import FCMState
import FCMTestSupport
import Foundation
import Testing

/// A service that checks, at every request, that the journal already holds the intent for it.
final class JournalCheckingService: TopicBatchService, @unchecked Sendable {
    let store: InMemoryStateStore
    let batchSize: Int
    private let lock = NSLock()
    private(set) var requests: [(topic: String, registrations: [Registration])] = []
    private(set) var requestsWithoutIntent = 0

    init(store: InMemoryStateStore, batchSize: Int = 1) {
        self.store = store
        self.batchSize = batchSize
    }

    private var found = Set<String>()
    private var linesRead = 0

    /// Reads only the lines added since the last call, so checking stays linear.
    func intentsInJournal() throws -> Set<String> {
        try lock.withLock {
            let (lines, _) = StateAssembly.lines(store.journalBytes)
            for (_, line) in lines.dropFirst(linesRead) {
                if case .entry(.intent(_, .subscribed(let topic, let registration))) = try JournalFormat.decodeLine(line) {
                    found.insert("\(topic) \(registration.value)")
                }
            }
            linesRead = lines.count
            return found
        }
    }

    var topicBatchSize: Int { batchSize }

    func performBatch(topic: String, action: SubscriptionChange.Action, _ registrations: [Registration]) async throws -> [Registration:
        SubscriptionOutcome]
    {
        let intents = try intentsInJournal()
        lock.withLock {
            requests.append((topic, registrations))
            requestsWithoutIntent += registrations.filter { !intents.contains("\(topic) \($0.value)") }.count
        }
        return Dictionary(uniqueKeysWithValues: registrations.map { ($0, SubscriptionOutcome.done) })
    }

}

@Suite struct ApplierJournalTests {
    func plan(_ count: Int) -> Plan {
        let members = (0..<count).map { Registration(value: "r\($0):APA91b", kind: .token) }
        return Plan(topics: [TopicChange(name: "news", ownership: .additive, added: members, removed: [], unchanged: 0)])
    }

    @Test(arguments: [1, 1000])
    func everyRequestHasItsIntentJournaledFirstAndJournalWritesAreGrouped(batchSize: Int) async throws {
        let store = InMemoryStateStore()
        let base = try await store.write(Ledger(lineage: "L", serial: 1), replacing: nil)
        let journal = try await store.openJournal(base: base, expectedBytes: 800_000)
        let service = JournalCheckingService(store: store, batchSize: batchSize)
        let (report, ledger) = await Applier(service: service, limit: .fixed(16), window: 256)
            .apply(plan(2000), observed: ObservedState(), ledger: Ledger(lineage: "L", serial: 1), journal: journal)
        #expect(report.succeeded)
        #expect(service.requestsWithoutIntent == 0)
        #expect(service.requests.reduce(0) { $0 + $1.registrations.count } == 2000)
        #expect(ledger.managedSubscribers(of: "news").count == 2000)
        // The journal alone reproduces the same ledger.
        let replayed = try await store.read()
        #expect(replayed.ledger.topics == ledger.topics)
        #expect(replayed.ledger.pending.isEmpty)
        // At most two writes per window of 256 (its intents, and completions once a window's worth is answered)
        // and one for the last completions. A batch of 1,000 registrations counts as one answer, not as 1,000:
        // counted by registration, every batch's answer was a write of its own (4 writes here, not 3).
        #expect(store.journalAppends <= (batchSize == 1 ? 2 * 8 + 1 : 3))
        // Each completion line names the last intent written before it.
        var lastIntent = 0
        var completionLines = 0
        for (_, line) in StateAssembly.lines(store.journalBytes).0 {
            switch try JournalFormat.decodeLine(line) {
            case .entry(.intent(let id, _)): lastIntent = id
            case .entry(.done(_, let after)), .entry(.gone(_, let after)):
                #expect(after == lastIntent)
                completionLines += 1
            case .run: break
            }
        }
        #expect(lastIntent == 2000 && completionLines >= 1)
    }

    /// The run's last request unanswered (its outcome unknown): its intent is the journal's last before the
    /// final completion line, and a journal with that intent cut out is refused, not read with it forgotten.
    @Test func theLastIntentCutBeforeTheFinalCompletionsIsRefused() async throws {
        let store = InMemoryStateStore()
        let base = try await store.write(Ledger(lineage: "L", serial: 1), replacing: nil)
        let journal = try await store.openJournal(base: base, expectedBytes: 800_000)
        let last = Registration(value: "r599:APA91b", kind: .token)
        let service = UnansweringService(unanswered: last)
        let (report, _) = await Applier(service: service, limit: .fixed(1), window: 256)
            .apply(plan(600), observed: ObservedState(), ledger: Ledger(lineage: "L", serial: 1), journal: journal)
        #expect(report.failures.count == 1)
        let bytes = store.journalBytes
        let lines = bytes.split(separator: UInt8(ascii: "\n"))
        #expect(lines.count >= 3 && String(decoding: lines[lines.count - 2], as: UTF8.self).contains("\"intent\":600,"))
        #expect(String(decoding: lines[lines.count - 1], as: UTF8.self).hasPrefix("{\"done\":["))
        let whole = try StateAssembly.snapshot(stored: nil, journal: bytes, statePath: "s", journalPath: "j")
        #expect(whole.ledger.pending.subscriptions["news"] == [last])
        let cut = Array((lines.dropLast(2) + [lines[lines.count - 1]]).joined(separator: [UInt8(ascii: "\n")])) + [UInt8(ascii: "\n")]
        #expect { try StateAssembly.snapshot(stored: nil, journal: cut, statePath: "s", journalPath: "j") } throws: {
            "\($0)".contains("a completion line written after intent 600 follows intent 599")
        }
    }

    @Test func aJournalThatStopsAcceptingWritesStopsTheRequests() async throws {
        let store = InMemoryStateStore()
        let base = try await store.write(Ledger(lineage: "L", serial: 1), replacing: nil)
        let journal = try await store.openJournal(base: base, expectedBytes: 800_000)
        store.failJournalAfter = 2
        let service = JournalCheckingService(store: store)
        let (report, _) = await Applier(service: service, limit: .fixed(8), window: 256)
            .apply(plan(2000), observed: ObservedState(), ledger: Ledger(lineage: "L", serial: 1), journal: journal)
        #expect(report.stopped?.contains("no space left") == true)
        #expect(service.requestsWithoutIntent == 0)
        #expect(report.notAttempted == 2000 - service.requests.count)
        #expect(service.requests.count <= 512)
        // What was sent is recorded or pending: nothing is lost.
        let snapshot = try await store.read()
        let known = snapshot.ledger.managedSubscribers(of: "news").union(snapshot.ledger.pending.subscriptions["news"] ?? [])
        #expect(Set(service.requests.flatMap(\.registrations)).isSubset(of: known))
    }
}

/// Answers every registration but one, whose request fails as if the connection dropped before the reply.
final class UnansweringService: TopicBatchService, Sendable {
    struct Dropped: Error {}
    let unanswered: Registration

    init(unanswered: Registration) { self.unanswered = unanswered }

    func performBatch(topic: String, action: SubscriptionChange.Action, _ registrations: [Registration]) async throws -> [Registration:
        SubscriptionOutcome]
    {
        if registrations.contains(unanswered) { throw Dropped() }
        return Dictionary(uniqueKeysWithValues: registrations.map { ($0, SubscriptionOutcome.done) })
    }
}

/// A service that requests a stop once it has answered `after` batches, and refuses, like a stopping sender,
/// whatever it is asked after that: the moment a signal lands in the middle of an apply.
final class StoppingService: TopicBatchService, @unchecked Sendable {
    let stop: StopSignal
    let after: Int
    private let lock = NSLock()
    private(set) var answered = 0

    init(stop: StopSignal, after: Int) {
        self.stop = stop
        self.after = after
    }

    func performBatch(topic: String, action: SubscriptionChange.Action, _ registrations: [Registration]) async throws -> [Registration:
        SubscriptionOutcome]
    {
        if let reason = stop.reason { throw StoppedBeforeSending(reason: reason) }
        let count = lock.withLock {
            answered += 1
            return answered
        }
        if count == after { stop.request("interrupted by SIGTERM", exitCode: 143) }
        return Dictionary(uniqueKeysWithValues: registrations.map { ($0, SubscriptionOutcome.done) })
    }

}

@Suite struct ApplierStopTests {
    @Test func aStopEndsTheSendingAndEveryAnswerIsRecorded() async throws {
        let store = InMemoryStateStore()
        let base = try await store.write(Ledger(lineage: "L", serial: 1), replacing: nil)
        let journal = try await store.openJournal(base: base, expectedBytes: 1_200_000)
        let stop = StopSignal()
        let service = StoppingService(stop: stop, after: 700)
        let members = (0..<3000).map { Registration(value: "r\($0):APA91b", kind: .token) }
        let plan = Plan(topics: [
            TopicChange(name: "news", ownership: .additive, added: members, removed: [], unchanged: 0),
            TopicChange(name: "old", ownership: .additive, added: [], removed: Array(members.prefix(10)), unchanged: 0),
        ])
        let (report, ledger) = await Applier(service: service, limit: .fixed(16), window: 256)
            .apply(plan, observed: ObservedState(), ledger: Ledger(lineage: "L", serial: 1), journal: journal, stop: stop)
        #expect(report.stopRequested)
        #expect(report.stopped == "interrupted by SIGTERM; stopped before sending more")
        // What FCM answered is recorded; everything else, including the requests that saw the stop on their way
        // out and every removal, is not attempted: nothing failed, nothing is left pending.
        #expect(report.operationsDone == service.answered)
        #expect(ledger.managedSubscribers(of: "news").count == service.answered)
        #expect(report.failures.isEmpty && report.unsettled == 0)
        #expect(report.operationsDone + report.notAttempted == 3010)
        #expect(ledger.pending.subscriptions.isEmpty)
    }

    @Test func aStopRequestedBeforehandSendsNothing() async throws {
        let store = InMemoryStateStore()
        let base = try await store.write(Ledger(lineage: "L", serial: 1), replacing: nil)
        let journal = try await store.openJournal(base: base, expectedBytes: 40000)
        let stop = StopSignal()
        stop.request("apply reached its --timeout of 1s", exitCode: 3)
        let service = StoppingService(stop: stop, after: .max)
        let members = (0..<100).map { Registration(value: "r\($0):APA91b", kind: .token) }
        let plan = Plan(topics: [TopicChange(name: "news", ownership: .additive, added: members, removed: [], unchanged: 0)])
        let (report, _) = await Applier(service: service, limit: .fixed(16))
            .apply(plan, observed: ObservedState(), ledger: Ledger(lineage: "L", serial: 1), journal: journal, stop: stop)
        #expect(service.answered == 0)
        #expect(report.stopRequested && report.notAttempted == 100)
    }
}
