import FCMCore
import FCMState
import FCMTestSupport
import Foundation
import Testing

/// The encoding of a shard (ShardEncoder, ShardDecoder) and the name tables of its index (ShardNames): names
/// written once, numbers that keep their names from one write to the next, and a reader that refuses what the
/// encoder would never write instead of reading it as other records.
@Suite struct ShardEncodingTests {
    func part(_ body: (inout Ledger) -> Void) -> Ledger {
        var ledger = Ledger(lineage: "0123abcd0123abcd0123abcd0123abcd", serial: 0)
        body(&ledger)
        return ledger
    }

    @Test func topicAndGroupNamesAreInTheIndexAndNotInTheShards() throws {
        let ledger = ShardedStateTests.sample()
        let names = ShardNames.numbering(for: ledger, keeping: nil)
        #expect(names.topics == ["all", "third"])
        #expect(names.groups.count == 13 && names.groups.contains("new-group"))
        for part in StateShards.split(ledger, bits: 3) {
            let text = String(decoding: ShardEncoder.encode(part, numbers: names.numbers), as: UTF8.self)
            #expect(!text.contains("\"all\"") && !text.contains("group-"), "\(text)")
        }
    }

    @Test func aRegistrationIsOneLineWithEverythingAboutIt() throws {
        let token = Registration(value: "tokA:APA91b", kind: .token)
        let part = part { ledger in
            for topic in ["a", "b", "c", "z"] { ledger.recordSubscription(token, topic: topic) }
            ledger.recordGroup("g", members: [token])
            ledger.groups["g"]?.protect = true
            ledger.deviceNames[token] = "kiosk-1"
            ledger.applied.registrations[AppliedDeclarations.fnv(token)] = 0xF0
            ledger.applied.registrations[42] = 7
            ledger.applied.groups["g"] = 1
        }
        let names = ShardNames(topics: ["a", "b", nil, "c", "y", "z"], groups: ["g"])
        let text = String(decoding: ShardEncoder.encode(part, numbers: names.numbers), as: UTF8.self)
        // Topics 0, 1, 3, 5 as differences; the fingerprint's key is the token's hash, so it is not written.
        #expect(text.contains("\n[\"tokA:APA91b\",[0,1,2,2],[0],\"kiosk-1\",\"AAAAAAAAADw\"]\n"), "\(text)")
        #expect(text.contains("\"groups\": [],\n\"protected\": [0],\n\"applied_groups\": {\"0\": \"AAAAAAAAAAB\"}"), "\(text)")
        #expect(text.contains("\"applied\": [\n\"AAAAAAAAAAqAAAAAAAAAAH\"\n]"), "\(text)")
        #expect(try ShardDecoder.decode(Array(text.utf8), names: names, lineage: part.lineage, source: "s") == part)
    }

    @Test func fingerprintsHaveOneSpellingEach() {
        for value: UInt64 in [0, 1, 0xF0, UInt64.max, 0x8000_0000_0000_0000, 0x0123_4567_89AB_CDEF] {
            let text = ShardEncoder.fingerprint(value)
            #expect(text.utf8.count == 11 && ShardEncoder.fingerprintValue(text.utf8) == value, "\(text)")
        }
        // 64 bits take 11 characters with 2 to spare: a first character above 15 would spell a 65th bit.
        #expect(ShardEncoder.fingerprintValue("QAAAAAAAAAA".utf8) == nil && ShardEncoder.fingerprintValue("PAAAAAAAAAA".utf8) != nil)
        #expect(ShardEncoder.fingerprintValue("AAAAAAAAAA".utf8) == nil && ShardEncoder.fingerprintValue("AAAAAAAAA=A".utf8) == nil)
    }

    @Test func numbersKeepTheirNamesAndHolesAreFilled() {
        var ledger = Ledger(lineage: "L", serial: 1)
        let token = Registration(value: "t", kind: .token)
        for topic in ["a", "c", "d"] { ledger.recordSubscription(token, topic: topic) }
        let previous = ShardNames(topics: ["a", "b", "c"], groups: [])
        // "b" left a hole, which "d" takes: "a" and "c" keep their numbers, so their shards need not change.
        #expect(ShardNames.numbering(for: ledger, keeping: previous).topics == ["a", "d", "c"])
        ledger.recordSubscription(token, topic: "e")
        #expect(ShardNames.numbering(for: ledger, keeping: previous).topics == ["a", "d", "c", "e"])
        // Trailing holes go; holes that outnumber the names in use are closed up.
        ledger.forgetSubscription(token, topic: "d")
        ledger.forgetSubscription(token, topic: "e")
        #expect(ShardNames.numbering(for: ledger, keeping: previous).topics == ["a", nil, "c"])
        ledger.forgetSubscription(token, topic: "a")
        #expect(ShardNames.numbering(for: ledger, keeping: ShardNames(topics: ["a", "b", "x", "c"])).topics == ["c"])
    }

    /// What the encoder never writes is refused, naming the field, never read as fewer or other records.
    @Test func anEditedShardIsRefusedByItsFields() throws {
        let token = Registration(value: "tokA:APA91b", kind: .token)
        let other = Registration(value: "tokB:APA91b", kind: .token)
        let part = part { ledger in
            ledger.recordSubscription(token, topic: "a")
            ledger.recordSubscription(token, topic: "b")
            ledger.recordSubscription(other, topic: "a")
            ledger.applied.registrations[AppliedDeclarations.fnv(token)] = 9
            ledger.pending.groups = ["g"]
            ledger.pending.groupMembers["g"] = [other]
        }
        let names = ShardNames(topics: ["a", "b"], groups: ["g"])
        let text = String(decoding: ShardEncoder.encode(part, numbers: names.numbers), as: UTF8.self)
        #expect(try ShardDecoder.decode(Array(text.utf8), names: names, lineage: part.lineage, source: "s") == part)
        let edits: [(String, String, String)] = [
            ("[0,1]", "[0,2]", "refers to topic number 2, which the index does not name"),
            ("[0,1]", "[1,0]", "is not a list of ascending numbers written as differences"),
            ("[0,1]", "[0,-1]", "is not a list of ascending numbers written as differences"),
            ("\"tokB:APA91b\"", "\"tokA:APA91b\"", "lists a registration a second time"),
            ("\"AAAAAAAAAAJ\"", "\"AAAAAAAAAJ\"", "is not a fingerprint"),
            ("\"lineage\"", "\"lineagE\"", "'lineagE' is not a field of a shard"),
            ("0123abcd0123", "0123abcd0124", "'lineage' is not the lineage of its index"),
            ("\"group_members\": {\"0\": [1]}", "\"group_members\": {\"0\": [2]}", "refers to a registration not in this shard"),
            ("\"groups\": [0]", "\"groups\": [1]", "refers to group number 1"),
            (",null]", ",0]", "is neither a fingerprint nor null"),
        ]
        for (find, replacement, problem) in edits {
            #expect(text.contains(find), "\(find) in \(text)")
            let edited = Array(text.replacingOccurrences(of: find, with: replacement).utf8)
            #expect("\(find) -> \(replacement)") {
                try ShardDecoder.decode(edited, names: names, lineage: part.lineage, source: "shard-7.json")
            } throws: {
                "\($0)".hasPrefix("shard-7.json: this shard of the state is not valid") && "\($0)".contains(problem)
            }
        }
    }

    /// Every byte of a stored shard changed, one at a time: each change is refused (the index holds the shard's
    /// SHA-256 and size), never read as other or fewer records.
    @Test func everyByteOfAShardIsCoveredByItsChecks() async throws {
        let storage = MemoryObjectStorage()
        let store = GCSStateStore(
            storage: storage, prefix: "prod", version: "test", pollInterval: .milliseconds(10), policy: ShardPolicy(fixedBits: 1))
        _ = try await store.write(ShardedStateTests.sample(devices: 12), replacing: nil)
        let expected = try await store.read().ledger
        let victim = try #require(try await storage.list(prefix: "prod/state.json.shards/").first)
        let original = try #require(try await storage.get(victim)).bytes
        var refused = 0
        for position in original.indices {
            var damaged = original
            damaged[position] = damaged[position] == UInt8(ascii: "4") ? UInt8(ascii: "6") : UInt8(ascii: "4")
            _ = try await storage.put(victim, damaged, ifGenerationMatch: nil)
            do {
                let read = try await store.read().ledger
                #expect(read == expected, "byte \(position) changed read as other records")
            } catch {
                #expect("\(error)".contains("\(victim): this shard of the state does not match its SHA-256"), "\(error)")
                refused += 1
            }
        }
        #expect(refused == original.count)
        _ = try await storage.put(victim, original, ifGenerationMatch: nil)
        #expect(try await store.read().ledger == expected)
    }
}
