import FCMCore
import FCMState
import Foundation
import Testing

@Suite struct StateFileFormatTests {
    let a = Registration(value: "a:APA91b\"quoted\\", kind: .token)
    let b = Registration(value: "b:APA91b", kind: .token)
    let f = Registration(value: "cR1rjyj4_KcAPA91bGusQ2", kind: .fid)

    func sample() -> Ledger {
        var ledger = Ledger(lineage: "L", serial: 7)
        ledger.recordSubscription(a, topic: "news")
        ledger.recordSubscription(f, topic: "news")
        ledger.recordSubscription(b, topic: "sport")
        ledger.recordGroup("fam", members: [a, f])
        ledger.groups["fam"]?.protect = true
        LedgerEvent.subscribed(topic: "weather", registration: b).markPending(in: &ledger)
        LedgerEvent.group(name: "maybe", members: [b]).markPending(in: &ledger)
        return ledger
    }

    @Test func currentVersionRoundTripsEveryRecordAndKind() throws {
        let ledger = sample()
        let bytes = StateFileFormat.encode(ledger, mergedRuns: ["r1"])
        let decoded = try StateFileFormat.decode(bytes, source: "s.json")
        #expect(decoded.ledger == ledger)
        #expect(decoded.formatVersion == StateFileFormat.currentVersion)
        #expect(decoded.mergedRuns == ["r1"])
        // Deterministic: the same ledger gives the same bytes.
        #expect(StateFileFormat.encode(decoded.ledger, mergedRuns: ["r1"]) == bytes)
    }

    /// Names of recorded registrations survive a write; a name whose registration the state no longer records
    /// (a token rotated away) is not written.
    @Test func deviceNamesOfRecordedRegistrationsRoundTrip() throws {
        var ledger = sample()
        ledger.deviceNames = [a: "kiosk \"one\"", f: "tablet", Registration(value: "gone:APA91b", kind: .token): "old"]
        let decoded = try StateFileFormat.decode(StateFileFormat.encode(ledger), source: "s").ledger
        #expect(decoded.deviceNames == [a: "kiosk \"one\"", f: "tablet"])
        #expect(decoded.topics == ledger.topics && decoded.groups == ledger.groups)
    }

    @Test func eachRegistrationIsStoredOnce() throws {
        let text = String(decoding: StateFileFormat.encode(sample()), as: UTF8.self)
        #expect(text.components(separatedBy: "cR1rjyj4_KcAPA91bGusQ2").count == 2)
        #expect(text.contains(#""fids": [\#n  "cR1rjyj4_KcAPA91bGusQ2"\#n]"#))
        #expect(text.contains(#""news": [0,2]"#))
    }

    @Test func versionOneIsReadForUpgrade() throws {
        let v1 = #"""
            {"groups":{"fam":{"members":[{"fid":"cR1rjyj4_KcAPA91bGusQ2"},{"token":"b:APA91b"}],"protect":true}},
             "lineage":"old","serial":12,"topics":{"news":[{"token":"b:APA91b"}]},"version":1}
            """#
        let decoded = try StateFileFormat.decode(Array(v1.utf8), source: "s.json")
        #expect(decoded.formatVersion == 1)
        #expect(decoded.ledger.lineage == "old" && decoded.ledger.serial == 12)
        #expect(decoded.ledger.groups["fam"] == LedgerGroup(members: [f, b], protect: true))
        #expect(decoded.ledger.managedSubscribers(of: "news") == [b])
    }

    @Test(arguments: [
        (#"{"version":9,"lineage":"L","serial":1}"#, "newer than this fcmctl understands"),
        (#"{"version":2,"serial":1}"#, "field 'lineage'"),
        (#"{"version":2,"lineage":"L","serial":1,"tokens":["a"],"groups":{},"topics":{"t":[3]}}"#, "field 'topics.t' refers to a registration"),
        (#"{"version":2,"lineage":"L","serial":1"#, "not valid JSON"),
        (#"{"version":2,"lineage":"L","serial":1,"serial":2}"#, "duplicate field 'serial'"),
    ])
    func damagedStateIsAnErrorNamingFileAndField(text: String, expected: String) {
        #expect {
            try StateFileFormat.decode(Array(text.utf8), source: "dir/state.json")
        } throws: { error in
            "\(error)".contains(expected) && "\(error)".hasPrefix("dir/state.json:")
        }
    }

    @Test func deepNestingIsRefusedWithoutExhaustingTheStack() {
        let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        #expect { try StateFileFormat.decode(Array(deep.utf8), source: "s") } throws: { "\($0)".contains("nested deeper") }
    }
}
