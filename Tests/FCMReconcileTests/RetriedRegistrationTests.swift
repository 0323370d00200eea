import FCMCore
import FCMReconcile
import FCMState
import FCMTestSupport
import Foundation
import Testing

/// A batch service whose client retried some registrations and still has them answered so: `unsettled` ones
/// had a retry nobody answered, `exhausted` ones were refused to the last attempt.
struct RetriedBatchService: TopicBatchService {
    var unsettled: Set<Registration>
    var exhausted: Set<Registration>
    var topicBatchSize: Int { 1000 }

    func performBatch(topic: String, action: SubscriptionChange.Action, _ registrations: [Registration]) async throws -> [Registration:
        SubscriptionOutcome]
    {
        Dictionary(
            uniqueKeysWithValues: registrations.map { registration in
                if unsettled.contains(registration) {
                    return (registration, .unsettled(code: "UNAVAILABLE", message: "retry 1 failed as a whole; FCM may have made the change"))
                }
                if exhausted.contains(registration) {
                    return (registration, .failed(code: "RESOURCE_EXHAUSTED", message: "FCM answered RESOURCE_EXHAUSTED in 6 batches"))
                }
                return (registration, .done)
            })
    }
}

@Suite struct RetriedRegistrationTests {
    @Test func eachRegistrationIsRecordedOnceAsItsRetriesEnded() async throws {
        let members = (0..<2500).map { Registration(value: "r\($0):APA91b", kind: .token) }
        let service = RetriedBatchService(unsettled: [members[7]], exhausted: [members[1500]])
        let store = InMemoryStateStore()
        let base = try await store.write(Ledger(lineage: "L", serial: 1), replacing: nil)
        let journal = try await store.openJournal(base: base, expectedBytes: 1_000_000)
        let plan = Plan(topics: [TopicChange(name: "news", ownership: .additive, added: members, removed: [], unchanged: 0)])
        let (report, ledger) = await Applier(service: service, limit: .fixed(4))
            .apply(plan, observed: ObservedState(), ledger: Ledger(lineage: "L", serial: 1), journal: journal)

        #expect(report.operationsDone == 2498)
        #expect(report.failures.count == 2)
        #expect(report.unsettled == 1)
        let byRegistration = Dictionary(uniqueKeysWithValues: report.failures.map { ($0.registrations, $0.status) })
        #expect(
            byRegistration[[members[1500]]]
                == .failed(code: "RESOURCE_EXHAUSTED", message: "FCM answered RESOURCE_EXHAUSTED in 6 batches", retryable: true))
        #expect(
            byRegistration[[members[7]]]
                == .failed(code: "UNAVAILABLE", message: "retry 1 failed as a whole; FCM may have made the change", retryable: true))
        // Done once, pending where FCM may have made it, absent where it said no.
        let recorded = ledger.managedSubscribers(of: "news")
        #expect(recorded.count == 2498)
        #expect(!recorded.contains(members[7]) && !recorded.contains(members[1500]))
        #expect(ledger.pending.subscriptions["news"] == [members[7]])
        // The journal: an intent for each of the 2,500 operations and one completion for each of the 2,498 done.
        var intents: [Int] = []
        var completed: [Int] = []
        for (_, line) in StateAssembly.lines(store.journalBytes).0 {
            switch try JournalFormat.decodeLine(line) {
            case .entry(.intent(let id, _)): intents.append(id)
            case .entry(.done(let ids, _)): completed += ids
            default: break
            }
        }
        #expect(intents.count == 2500 && Set(intents).count == 2500)
        #expect(completed.count == 2498 && Set(completed).count == 2498)
        // Read back after a crash, the journal holds both operations without a completion pending (the next
        // refresh settles them); the ledger the run writes keeps only the one FCM may have made.
        let replayed = try await store.read()
        #expect(replayed.ledger.topics == ledger.topics)
        #expect(replayed.ledger.pending.subscriptions["news"] == [members[7], members[1500]])
    }
}
