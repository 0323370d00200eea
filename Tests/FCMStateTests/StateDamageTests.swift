import FCMCore
import FCMState
import Foundation
import Testing

/// A damaged or altered state is refused with a message naming the file, never read as other (often
/// fewer) records: a state read as empty forgets every subscription it held, for good.
@Suite struct StateDamageTests {
    static let a = Registration(value: "a:APA91bAAAAAAAAAAAAAAAAAAAAAA", kind: .token)
    static let b = Registration(value: "b:APA91bBBBBBBBBBBBBBBBBBBBBBB", kind: .token)
    static let f = Registration(value: "cR1rjyj4_KcAPA91bGusQ2", kind: .fid)

    static func sample() -> Ledger {
        var ledger = Ledger(lineage: "0123abcd0123abcd0123abcd0123abcd", serial: 41)
        ledger.recordSubscription(a, topic: "news")
        ledger.recordSubscription(f, topic: "news")
        ledger.recordSubscription(b, topic: "sports")
        ledger.recordGroup("family", members: [a, b])
        ledger.groups["family"]?.protect = true
        ledger.pending.subscriptions["alerts"] = [b]
        ledger.pending.groups = ["kids"]
        ledger.project = ProjectBinding(id: "acme-prod", senderId: "222222222222")
        return ledger
    }

    static var text: String { String(decoding: StateFileFormat.encode(sample()), as: UTF8.self) }

    func refused(_ text: String, _ expected: String) {
        #expect {
            try StateFileFormat.decode(Array(text.utf8), source: "bucket/state.json")
        } throws: { error in
            "\(error)".hasPrefix("bucket/state.json:") && "\(error)".contains(expected)
        }
    }

    /// The sample as a genuine version-2 state: no checksum and no project (fields versions 3 and 4 brought).
    func version2(_ edit: (String) -> String) -> String {
        var text = Self.text.replacingOccurrences(of: "\"version\": \(StateFileFormat.currentVersion)", with: "\"version\": 2")
        if let range = text.range(of: ",\n\"checksum\"") { text = String(text[..<range.lowerBound]) + "\n}\n" }
        text = text.replacingOccurrences(of: ",\n\"project\": {\"id\": \"acme-prod\", \"sender_id\": \"222222222222\"}", with: "")
        return edit(text)
    }

    /// Field checks on their own: the sample edited and read as `state push` reads a file (by its fields, not
    /// its checksum), so the strict reading, not only the checksum, is exercised.
    func byFields(_ text: String, _ expected: String) {
        #expect {
            try StateFileFormat.decode(Array(text.utf8), source: "bucket/state.json", checkingChecksum: false)
        } throws: { error in
            "\(error)".hasPrefix("bucket/state.json:") && "\(error)".contains(expected)
        }
    }

    @Test func theSampleReadsBack() throws {
        #expect(try StateFileFormat.decode(Array(Self.text.utf8), source: "s").ledger == Self.sample())
        var unbound = Self.sample()
        unbound.project = ProjectBinding()
        let old = try StateFileFormat.decode(Array(version2 { $0 }.utf8), source: "s")
        #expect(old.ledger == unbound && old.formatVersion == 2, "version 2 is still read")
    }

    @Test(arguments: [
        ("\"topics\":", "\"topicz\":", "field 'topicz' is not a field of a state"),
        ("\"groups\":", "\"Groups\":", "field 'Groups' is not a field of a state"),
        ("\"version\": 4", "\"version\": 0", "field 'version' is 0"),
        ("\"version\": 4", "\"version\": -7", "field 'version' is -7"),
        ("\"groups\": [\"kids\"]", "\"groups\": [7]", "field 'pending.groups' is not a list of group names"),
        ("\"groups\": [\"kids\"]", "\"groups\": \"kids\"", "field 'pending.groups' is not a list of group names"),
        ("\"protect\"", "\"protekt\"", ""),
        ("\"tokens\": [\n  \"a:APA91bAAAAAAAAAAAAAAAAAAAAAA\"", "\"tokens\": [\n  \"b:APA91bBBBBBBBBBBBBBBBBBBBBBB\"", "lists a registration twice"),
        ("\"lineage\": \"0123abcd0123abcd0123abcd0123abcd\"", "\"lineage\": 5", "field 'lineage'"),
        ("\"serial\": 41", "\"serial\": \"41\"", "field 'serial'"),
        ("\"serial\": 41", "\"serial\": -1", "field 'serial'"),
        ("\"project\": {", "\"projekt\": {", "field 'projekt' is not a field of a state"),
        ("\"sender_id\": \"222222222222\"", "\"sender_id\": 222222222222", "field 'project.sender_id' is not a non-empty string"),
        ("\"id\": \"acme-prod\"", "\"name\": \"acme-prod\"", "field 'project.name' is not a field of a state's project"),
    ])
    func strictReadingByFields(find: String, replace: String, expected: String) throws {
        let damaged = Self.text.replacingOccurrences(of: find, with: replace)
        try #require(damaged != Self.text, "the sample has no \(find) to damage")
        if expected.isEmpty {
            // Damage that leaves a readable state must at least keep every record.
            let ledger = try? StateFileFormat.decode(Array(damaged.utf8), source: "bucket/state.json", checkingChecksum: false).ledger
            #expect(ledger == nil || ledger!.topics == Self.sample().topics)
        } else {
            byFields(damaged, expected)
        }
    }

    @Test func missingTopicsOrGroupsAreNotEmptyOnes() {
        refused(version2 { $0.replacingOccurrences(of: "\"topics\": {", with: "\"unused\": {") }, "field 'unused' is not a field")
        let noTopics = version2 { text in
            guard let start = text.range(of: ",\n\"topics\": {"), let end = text.range(of: "\n}", range: start.upperBound..<text.endIndex)
            else { return text }
            return String(text[..<start.lowerBound]) + String(text[end.upperBound...])
        }
        refused(noTopics, "field 'topics' is missing")
    }

    /// Every single-byte change of a current state: refused, or read as exactly the same records (a change
    /// inside the checksum's own digits can only be refused).
    @Test func everySingleByteChangeIsDetected() {
        let bytes = Array(Self.text.utf8)
        var refusedCount = 0
        for index in bytes.indices {
            for replacement in [UInt8(ascii: "0"), UInt8(ascii: "x")] where bytes[index] != replacement {
                var damaged = bytes
                damaged[index] = replacement
                if let ledger = try? StateFileFormat.decode(damaged, source: "s").ledger {
                    #expect(ledger == Self.sample(), "byte \(index) changed to \(replacement) was read as other records")
                } else {
                    refusedCount += 1
                }
            }
        }
        #expect(refusedCount > bytes.count, "nearly every change is refused: \(refusedCount) of \(bytes.count * 2)")
    }

    @Test func aCutOrAlteredStateNamesWhatToDo() {
        let text = Self.text
        refused(text.replacingOccurrences(of: "sports", with: "sportz"), "checksum does not match")
        refused(String(text.prefix(text.count - 90)) + "\n}\n", "no checksum")
        refused(String(text.prefix(text.count / 2)), "not valid JSON")
    }

    @Test func aPushedFileIsCheckedByItsFieldsNotItsChecksum() throws {
        let edited = Self.text.replacingOccurrences(of: "sports", with: "weather")
        let ledger = try StateFileFormat.decode(Array(edited.utf8), source: "edited.json", checkingChecksum: false).ledger
        #expect(ledger.managedSubscribers(of: "weather") == [Self.b])
        #expect(throws: StateError.self) {
            try StateFileFormat.decode(
                Array(edited.replacingOccurrences(of: "\"topics\":", with: "\"topicz\":").utf8), source: "e", checkingChecksum: false)
        }
    }
}
