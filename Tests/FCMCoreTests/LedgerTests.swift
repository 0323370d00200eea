import FCMCore
import Foundation
import Testing

@Suite struct LedgerTests {
    let a = Registration(value: "tok-a", kind: .token)
    let f = Registration(value: "cR1rjyj4_KcAPA91bGusQ2", kind: .fid)

    @Test func roundTripKeepsKindsAndWritesSortedMembers() throws {
        var ledger = Ledger(lineage: "L", serial: 3)
        ledger.recordSubscription(f, topic: "news")
        ledger.recordSubscription(a, topic: "news")
        ledger.recordGroup("g", members: [f, a])
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let data = try encoder.encode(ledger)
        let text = String(decoding: data, as: UTF8.self)
        #expect(text.contains(#""news":[{"fid":"cR1rjyj4_KcAPA91bGusQ2"},{"token":"tok-a"}]"#))
        let decoded = try JSONDecoder().decode(Ledger.self, from: data)
        #expect(decoded == ledger)
        #expect(decoded.managedSubscribers(of: "news") == [a, f])
    }

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
        let aligned = ledger.aligned(with: observed, desired: desired)
        #expect(aligned.managedSubscribers(of: "news") == [f])
        #expect(aligned.groups["gone"] == nil)
        #expect(aligned.groups["adopt"]?.registrations == [a, f])
    }
}

@Suite struct LedgerEventTests {
    @Test(arguments: [
        LedgerEvent.subscribed(topic: "news", registration: LedgerRegistration(Registration(value: "a:APA91b\"q\\", kind: .token))),
        .unsubscribed(topic: "t%1", registration: LedgerRegistration(Registration(value: "cR1rjyj4_KcAPA91bGusQ2", kind: .fid))),
        .group(name: "fam", members: [LedgerRegistration(Registration(value: "x:APA91b", kind: .token))]),
    ])
    func journalLinesDecodeToTheSameEvent(event: LedgerEvent) throws {
        #expect(try JSONDecoder().decode(LedgerEvent.self, from: Data(event.journalLine.utf8)) == event)
    }
}
