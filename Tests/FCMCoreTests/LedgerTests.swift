import FCMCore
import FCMTestSupport
import Foundation
import Testing

@Suite struct LedgerTests {
    let a = Registration(value: "tok-a", kind: .token)
    let f = Registration(value: "cR1rjyj4_KcAPA91bGusQ2", kind: .fid)

    @Test func alignmentDropsVanishedRecordsAndAdoptsExistingGroups() {
        var ledger = Ledger()
        ledger.recordSubscription(a, topic: "news")
        ledger.recordSubscription(f, topic: "news")
        ledger.recordGroup("gone", members: [a])
        let desired = DesiredState(
            project: ProjectSettings(id: "p", senderId: "1"), groups: ["adopt": DesiredGroup(name: "adopt", members: [a])])
        let observed = ObservedState(
            groups: ["adopt": ObservedGroup(name: "adopt", notificationKey: "k", members: [a, f])],
            registrations: [a: .active(topics: []), f: .active(topics: ["news"])])
        let aligned = ledger.aligned(with: observed, desired: desired, adoptExisting: true)
        #expect(aligned.managedSubscribers(of: "news") == [f])
        #expect(aligned.groups["gone"] == nil)
        #expect(aligned.groups["adopt"]?.members == [a, f])
        // Without --adopt-existing a group fcmctl never recorded stays out of the state.
        #expect(ledger.aligned(with: observed, desired: desired).groups["adopt"] == nil)
    }
}

@Suite struct PendingChangeTests {
    let a = Registration(value: "tok-a", kind: .token)
    let b = Registration(value: "tok-b", kind: .token)
    let c = Registration(value: "tok-c", kind: .token)

    /// An intent with no completion may have happened: FCM decides, and what FCM shows becomes fcmctl's.
    @Test func refreshSettlesPendingSubscriptionsAndGroups() {
        var ledger = Ledger()
        LedgerEvent.subscribed(topic: "news", registration: a).markPending(in: &ledger)
        LedgerEvent.subscribed(topic: "news", registration: b).markPending(in: &ledger)
        LedgerEvent.subscribed(topic: "news", registration: c).markPending(in: &ledger)
        LedgerEvent.group(name: "made", members: [a]).markPending(in: &ledger)
        LedgerEvent.group(name: "never", members: [a]).markPending(in: &ledger)
        #expect(ledger.subscribedRegistrations == [a, b, c])
        #expect(ledger.knownGroupNames == ["made", "never"])
        let observed = ObservedState(
            groups: ["made": ObservedGroup(name: "made", notificationKey: "k", members: [a])],
            registrations: [a: .active(topics: ["news"]), b: .active(topics: [])])
        let aligned = ledger.aligned(with: observed, desired: DesiredState(project: ProjectSettings(id: "p", senderId: "1")))
        #expect(aligned.managedSubscribers(of: "news") == [a])
        // c was not refreshed: it stays pending rather than being forgotten or claimed.
        #expect(aligned.pending.subscriptions == ["news": [c]])
        #expect(aligned.groups["made"]?.members == [a])
        #expect(aligned.groups["never"] == nil)
        #expect(aligned.pending.groups.isEmpty)
    }

    @Test func completionsClearPendingAndGoneForgets() {
        var ledger = Ledger()
        LedgerEvent.subscribed(topic: "news", registration: a).markPending(in: &ledger)
        LedgerEvent.subscribed(topic: "news", registration: a).apply(to: &ledger)
        #expect(ledger.pending.isEmpty)
        #expect(ledger.managedSubscribers(of: "news") == [a])
        LedgerEvent.subscribed(topic: "news", registration: a).applyGone(to: &ledger)
        #expect(ledger.managedSubscribers(of: "news").isEmpty)
        #expect(ledger.isEmpty)
    }

    @Test func serialAtTheEndOfTheRangeIsRefusedNotWrapped() {
        #expect(throws: LedgerError.self) { try Ledger(lineage: "L", serial: Int.max).nextSerial() }
        #expect((try? Ledger(lineage: "L", serial: 41).nextSerial()) == 42)
    }
}

/// What fcmctl knows of a registration outlives an apply that could not read it: a known one stays declared
/// (and is read again by `--refresh=changed`), a never-seen one stays unknown.
@Suite struct AppliedDeclarationTests {
    let known = Registration(value: "known:APA91b", kind: .token)
    let fresh = Registration(value: "fresh:APA91b", kind: .token)

    func desired(_ members: Set<Registration>) -> DesiredState {
        DesiredState(project: ProjectSettings(id: "p", senderId: "1"), topics: ["news": DesiredTopic(name: "news", members: members)])
    }

    @Test func anUnsettledRegistrationStaysKnownOnlyIfItWasKnown() {
        var ledger = Ledger()
        ledger.recordApplied(desired([known]), unsettled: [Registration]())
        #expect(ledger.applied.declares(known) && !ledger.applied.declares(fresh))
        ledger.recordApplied(desired([known, fresh]), unsettled: [known, fresh])
        #expect(ledger.applied.declares(known))
        #expect(!ledger.applied.declares(fresh))
        // Unsettled reads as changed, so `--refresh=changed` reads both again.
        #expect(ledger.applied.changedRegistrations(in: desired([known, fresh])) == [known, fresh])
        ledger.recordApplied(desired([known, fresh]), unsettled: [Registration]())
        #expect(ledger.applied.changedRegistrations(in: desired([known, fresh])).isEmpty)
    }

    @Test func changedRegistrationsAreThoseWhoseTopicsOrOwnershipChanged() {
        // Applied with one random manifest, planned with another made from it by the edits a pull request makes:
        // what is found changed must be exactly the registrations whose topics or their ownership differ.
        var generator = SeededGenerator(seed: 7)
        let registrations = (0..<600).map { Registration(value: "changed-\($0):APA91b", kind: .token) }
        let topics = ["a", "b", "c", "d"]
        func manifest(_ membership: [Registration: Set<String>], authoritative: Set<String>) -> DesiredState {
            var desired = DesiredState(project: ProjectSettings(id: "p", senderId: "1"))
            for topic in topics {
                let members = Set(membership.filter { $0.value.contains(topic) }.keys)
                desired.topics[topic] = DesiredTopic(
                    name: topic, members: members, ownership: authoritative.contains(topic) ? .authoritative : .additive)
            }
            return desired
        }
        for _ in 0..<20 {
            var before: [Registration: Set<String>] = [:]
            for registration in registrations { before[registration] = Set(topics.filter { _ in Bool.random(using: &generator) }) }
            var after = before
            for registration in registrations.shuffled(using: &generator).prefix(40) {
                after[registration] = Set(topics.filter { _ in Bool.random(using: &generator) })
            }
            let flipped: Set<String> = Bool.random(using: &generator) ? ["d"] : []
            var ledger = Ledger()
            ledger.recordApplied(manifest(before, authoritative: []), unsettled: [Registration]())
            let expected = Set(
                registrations.filter { registration in
                    guard let now = after[registration], !now.isEmpty else { return false }
                    return now != before[registration] || !now.isDisjoint(with: flipped)
                })
            #expect(ledger.applied.changedRegistrations(in: manifest(after, authoritative: flipped)) == expected)
        }
    }
}
