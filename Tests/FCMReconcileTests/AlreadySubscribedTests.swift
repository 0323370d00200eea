import FCMCore
import FCMReconcile
import FCMState
import FCMTestSupport
import Foundation
import Testing

/// Answers each create as FCM's v1 API would for what it holds: `held` already subscribed (409), `unknown` gone.
final class HeldSubscriptionService: TopicBatchService, @unchecked Sendable {
    let held: Set<Registration>
    let unknown: Set<Registration>

    init(held: Set<Registration> = [], unknown: Set<Registration> = []) {
        self.held = held
        self.unknown = unknown
    }

    func performBatch(topic: String, action: SubscriptionChange.Action, _ registrations: [Registration]) async throws -> [Registration:
        SubscriptionOutcome]
    {
        Dictionary(
            uniqueKeysWithValues: registrations.map { registration in
                if unknown.contains(registration) { return (registration, SubscriptionOutcome.registrationGone(reason: "NOT_FOUND")) }
                return (registration, held.contains(registration) && action == .subscribe ? .alreadyExists : .done)
            })
    }
}

@Suite struct AlreadySubscribedTests {
    let mine = Registration(value: "mine:APA91bMine", kind: .token)
    let theirs = Registration(value: "theirs:APA91bTheirs", kind: .token)
    let recorded = Registration(value: "recorded:APA91bRecorded", kind: .token)
    let mistyped = Registration(value: "mistyped:APA91bMisty", kind: .token)

    func run(_ plan: Plan, service: HeldSubscriptionService, unverified: Set<Registration> = []) async throws -> (
        ApplyReport, Ledger, replayed: Ledger
    ) {
        let store = InMemoryStateStore()
        var ledger = Ledger(lineage: "L", serial: 1)
        ledger.recordSubscription(recorded, topic: "news")
        let base = try await store.write(ledger, replacing: nil)
        let journal = try await store.openJournal(base: base, expectedBytes: 40_000)
        let (report, applied) = await Applier(service: service, limit: .fixed(4), window: 16).apply(
            plan, observed: ObservedState(), ledger: ledger, journal: journal, unverified: unverified)
        return (report, applied, try await store.read().ledger)
    }

    @Test func aCreateAnsweredAlreadyExistsIsHeldButRecordedOnlyWhenTheRecordsSayItIsFcmctls() async throws {
        let plan = Plan(topics: [TopicChange(name: "news", ownership: .additive, added: [mine, theirs, recorded], removed: [], unchanged: 0)])
        let (report, ledger, replayed) = try await run(plan, service: HeldSubscriptionService(held: [theirs, recorded]))
        #expect(report.succeeded)
        #expect(report.operationsDone == 2)
        #expect(report.alreadySubscribed == 1)
        #expect(report.requestsSucceeded == 1, "a 409 is FCM's no: only the create of `mine` was a yes")
        #expect(report.outcomes.map(\.registrations) == [[theirs]])
        #expect(report.outcomes.map(\.status) == [.alreadySubscribed])
        #expect(ledger.managedSubscribers(of: "news") == [mine, recorded])
        // The journal alone says the same: the 409's intent closes with no record and nothing pending.
        #expect(replayed.topics == ledger.topics)
        #expect(replayed.pending.isEmpty)
    }

    @Test func aRegistrationNeverReadThatFCMDoesNotKnowFailsItsCreateInsteadOfBeingSkipped() async throws {
        let plan = Plan(topics: [
            TopicChange(name: "news", ownership: .additive, added: [mine, mistyped], removed: [], unchanged: 0),
            TopicChange(name: "sport", ownership: .additive, added: [mistyped], removed: [], unchanged: 0),
        ])
        let (report, ledger, replayed) = try await run(plan, service: HeldSubscriptionService(unknown: [mistyped]), unverified: [mine, mistyped])
        #expect(!report.succeeded)
        #expect(report.gone.isEmpty)
        #expect(report.failures.map(\.address).sorted() == [.topic("news"), .topic("sport")])
        for failure in report.failures {
            #expect(failure.registrations == [mistyped])
            guard case .failed(let code, let message, let retryable) = failure.status else { continue }
            #expect(code == "NOT_FOUND" && !retryable)
            #expect(message.contains("not read before this create"))
        }
        #expect(ledger.managedSubscribers(of: "news") == [mine, recorded])
        #expect(ledger.managedSubscribers(of: "sport").isEmpty)
        #expect(replayed.topics == ledger.topics && replayed.pending.isEmpty)
    }

    /// Read first (not `unverified`), the same answer is drift, as it always was.
    @Test func aRegistrationThatWasReadAndIsGoneIsStillSkipped() async throws {
        let plan = Plan(topics: [TopicChange(name: "news", ownership: .additive, added: [mistyped], removed: [], unchanged: 0)])
        let (report, _, _) = try await run(plan, service: HeldSubscriptionService(unknown: [mistyped]))
        #expect(report.succeeded)
        #expect(report.gone.count == 1)
    }

    /// A device's new token never read and unknown to FCM: its old one keeps its subscriptions.
    @Test func aRotationKeepsTheOldTokenWhenTheUnreadNewOneFails() async throws {
        var plan = Plan(topics: [TopicChange(name: "news", ownership: .additive, added: [mistyped], removed: [recorded], unchanged: 0)])
        plan.successors = [recorded: mistyped]
        let (report, ledger, _) = try await run(plan, service: HeldSubscriptionService(unknown: [mistyped]), unverified: [mistyped])
        #expect(ledger.managedSubscribers(of: "news") == [recorded])
        #expect(report.outcomes.contains { $0.action == .unsubscribe && $0.status.kind == .notAttempted && $0.registrations == [recorded] })
    }
}
