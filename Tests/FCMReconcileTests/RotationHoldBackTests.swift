import FCMCore
import FCMReconcile
import FCMState
import FCMTestSupport
import Foundation
import Testing

/// Answers every change as done, except subscriptions of `unknown`, which FCM calls gone: a device's new token
/// that FCM never issued (an export cut short), met at apply time.
final class UnknownNewTokenService: TopicBatchService, @unchecked Sendable {
    let unknown: Set<Registration>
    private let lock = NSLock()
    private(set) var sent: [(action: SubscriptionChange.Action, topic: String, registration: Registration)] = []

    init(unknown: Set<Registration>) { self.unknown = unknown }

    func performBatch(topic: String, action: SubscriptionChange.Action, _ registrations: [Registration]) async throws -> [Registration:
        SubscriptionOutcome]
    {
        lock.withLock { sent += registrations.map { (action, topic, $0) } }
        return Dictionary(
            uniqueKeysWithValues: registrations.map { ($0, unknown.contains($0) ? SubscriptionOutcome.registrationGone(reason: "NOT_FOUND") : .done) }
        )
    }

}

@Suite struct RotationHoldBackTests {
    let old = Registration(value: "old-k2:APA91bWorking", kind: .token)
    let new = Registration(value: "old-k2:APA91bWork", kind: .token)
    let other = Registration(value: "k3:APA91bLeaving", kind: .token)

    func run(_ plan: Plan, service: UnknownNewTokenService) async throws -> (ApplyReport, Ledger) {
        let store = InMemoryStateStore()
        var ledger = Ledger(lineage: "L", serial: 1)
        for topic in ["news", "alerts"] {
            ledger.recordSubscription(old, topic: topic)
            ledger.recordSubscription(other, topic: topic)
        }
        let base = try await store.write(ledger, replacing: nil)
        let journal = try await store.openJournal(base: base, expectedBytes: 40_000)
        return await Applier(service: service, limit: .fixed(4), window: 16).apply(plan, observed: ObservedState(), ledger: ledger, journal: journal)
    }

    func rotation() -> Plan {
        var plan = Plan(
            topics: ["alerts", "news"].map { TopicChange(name: $0, ownership: .additive, added: [new], removed: [old, other], unchanged: 0) })
        plan.successors = [old: new]
        return plan
    }

    @Test func theOldRegistrationStaysWhenTheNewOneIsUnknownToFCM() async throws {
        let service = UnknownNewTokenService(unknown: [new])
        let (report, ledger) = try await run(rotation(), service: service)
        // The working token was never unsubscribed; the device that really left was.
        #expect(!service.sent.contains { $0.action == .unsubscribe && $0.registration == old })
        #expect(service.sent.filter { $0.action == .unsubscribe }.map(\.registration) == [other, other])
        #expect(ledger.managedSubscribers(of: "news") == [old])
        #expect(ledger.managedSubscribers(of: "alerts") == [old])
        let held = report.outcomes.filter {
            if case .notAttempted(let reason) = $0.status { reason.contains("new registration could not be subscribed") } else { false }
        }
        #expect(held.flatMap(\.registrations) == [old, old])
    }

    @Test func theOldRegistrationGoesOnceTheNewOneIsSubscribed() async throws {
        let service = UnknownNewTokenService(unknown: [])
        let (report, ledger) = try await run(rotation(), service: service)
        #expect(report.succeeded && report.notAttempted == 0)
        #expect(Set(service.sent.filter { $0.action == .unsubscribe }.map(\.registration)) == [old, other])
        #expect(ledger.managedSubscribers(of: "news") == [new])
    }
}

extension RotationHoldBackTests {
    /// The new registration could not be read (a token of another project: SENDER_ID_MISMATCH), so nothing was
    /// planned for it and nothing was sent for it: the old one keeps its topics all the same.
    @Test func theOldRegistrationStaysWhenTheNewOneCouldNotBeRead() async throws {
        var plan = Plan(topics: ["alerts", "news"].map { TopicChange(name: $0, ownership: .additive, added: [], removed: [old], unchanged: 0) })
        plan.successors = [old: new]
        var observed = ObservedState()
        observed.unreadable[new] = "PERMISSION_DENIED: SenderId mismatch"
        let service = UnknownNewTokenService(unknown: [])
        let store = InMemoryStateStore()
        var ledger = Ledger(lineage: "L", serial: 1)
        for topic in ["news", "alerts"] { ledger.recordSubscription(old, topic: topic) }
        let journal = try await store.openJournal(base: try await store.write(ledger, replacing: nil), expectedBytes: 40_000)
        let (report, after) = await Applier(service: service, limit: .fixed(4), window: 16)
            .apply(plan, observed: observed, ledger: ledger, journal: journal)
        #expect(service.sent.isEmpty)
        #expect(after.managedSubscribers(of: "news") == [old] && after.managedSubscribers(of: "alerts") == [old])
        #expect(report.notAttempted == 2)
    }
}
