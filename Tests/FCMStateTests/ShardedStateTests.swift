import FCMCore
import FCMState
import FCMTestSupport
import Foundation
import Synchronization
import Testing

/// The sharded layout: a ledger cut by stable hashes into shards that merge back into it exactly, writes that
/// put only the shards whose bytes changed, and reads that refuse a missing or altered shard by name.
@Suite struct ShardedStateTests {
    /// A ledger with something in every part a shard may hold, and registrations in groups only.
    static func sample(devices: Int = 200) -> Ledger {
        var ledger = Ledger(lineage: "0123abcd0123abcd0123abcd0123abcd", serial: 3)
        ledger.project = ProjectBinding(id: "acme", senderId: "42")
        for number in 0..<devices {
            let registration = Registration(value: "tok\(number):APA91b" + String(repeating: "x", count: 40), kind: number % 7 == 0 ? .fid : .token)
            ledger.recordSubscription(registration, topic: "all")
            if number % 3 == 0 { ledger.recordSubscription(registration, topic: "third") }
            ledger.deviceNames[registration] = "device-\(number)"
            ledger.applied.registrations[AppliedDeclarations.fnv(registration.value)] = UInt64(number)
        }
        for group in 0..<12 {
            let members = Set((0..<5).map { Registration(value: "member\(group)-\($0)", kind: .token) })
            ledger.recordGroup("group-\(group)", members: members)
            ledger.applied.groups["group-\(group)"] = UInt64(group)
            for member in members { ledger.deviceNames[member] = "kiosk-\(group)" }
        }
        ledger.groups["group-3"]?.protect = true
        ledger.pending.subscriptions["third"] = [Registration(value: "pending:APA91b", kind: .token)]
        ledger.pending.groups = ["group-5", "new-group"]
        ledger.pending.groupMembers["new-group"] = [Registration(value: "member5-1", kind: .token)]
        return ledger
    }

    @Test func theShardsMergeBackIntoTheLedger() throws {
        let ledger = Self.sample()
        // What the single document keeps of it (it drops names of registrations it records nowhere).
        let whole = try StateFileFormat.decode(StateFileFormat.encode(ledger), source: "whole").ledger
        let names = ShardNames.numbering(for: ledger, keeping: nil)
        for bits in [1, 3, 6] {
            let parts = StateShards.split(ledger, bits: bits)
            #expect(parts.count == 1 << bits)
            var merged = Ledger(lineage: ledger.lineage, serial: ledger.serial)
            merged.project = ledger.project
            for part in parts {
                let bytes = ShardEncoder.encode(part, numbers: names.numbers)
                let reread = try ShardDecoder.decode(bytes, names: names, lineage: ledger.lineage, source: "part")
                StateShards.merge(reread, into: &merged)
            }
            #expect(merged == whole, "bits \(bits)")
        }
    }

    /// The cut must not depend on the process (Swift's Hasher is seeded per run): these are fixed numbers.
    @Test func theCutIsTheSameInEveryRun() {
        var ledger = Ledger(lineage: "L", serial: 1)
        ledger.recordSubscription(Registration(value: "fixed-token", kind: .token), topic: "news")
        ledger.recordGroup("fixed-group", members: [Registration(value: "fixed-token", kind: .token)])
        let parts = StateShards.split(ledger, bits: 8)
        #expect(parts.indices.filter { !parts[$0].topics.isEmpty } == [83])
        // The group's record in its name's shard, its member beside that registration's other records.
        #expect(parts.indices.filter { !parts[$0].groups.isEmpty } == [83, 151])
        #expect(parts[151].groups["fixed-group"]?.members.isEmpty == true)
        #expect(parts[83].groups["fixed-group"]?.members == [Registration(value: "fixed-token", kind: .token)])
    }

    /// A registration's bytes are written in one shard, whatever groups and topics hold it: a fleet whose every
    /// device is in a group once wrote each token twice.
    @Test func aRegistrationIsWrittenInOneShard() {
        let parts = StateShards.split(Self.sample(), bits: 3)
        var seen: [Registration: Int] = [:]
        for (index, part) in parts.enumerated() {
            var here = Set<Registration>()
            for members in part.topics.values { here.formUnion(members) }
            for group in part.groups.values { here.formUnion(group.members) }
            for registration in here { #expect(seen.updateValue(index, forKey: registration) == nil, "\(registration) in two shards") }
        }
        #expect(seen.count == 200 + 12 * 5)
    }

    @Test func theShardCountFollowsTheSize() {
        let policy = ShardPolicy(targetBytes: 1000)
        #expect(policy.bits(forTotal: 2000) == 0 && policy.keeps(bits: 0, total: 2000) && !policy.keeps(bits: 0, total: 2001))
        #expect(policy.bits(forTotal: 2001) == 1 && policy.bits(forTotal: 1_000_000) == 10)
        // Kept while shards stay within a quarter and four times the target, so a few writes do not re-cut.
        #expect(policy.keeps(bits: 10, total: 300_000) && policy.keeps(bits: 10, total: 4_000_000))
        #expect(!policy.keeps(bits: 10, total: 200_000) && !policy.keeps(bits: 10, total: 5_000_000))
        #expect(ShardPolicy(fixedBits: 3).bits(forTotal: 0) == 3 && ShardPolicy(fixedBits: 40).fixedBits == ShardPolicy.maxBits)
    }

    // MARK: Stores

    func store(_ storage: any ObjectStorage, bits: Int? = 3, target: Int = 256 * 1024) -> GCSStateStore {
        GCSStateStore(
            storage: storage, prefix: "prod", version: "test", pollInterval: .milliseconds(10),
            policy: ShardPolicy(fixedBits: bits, targetBytes: target))
    }

    func shardNames(_ storage: any ObjectStorage) async throws -> [String] {
        try await storage.list(prefix: "prod/state.json.shards/")
    }

    @Test func aStateInTheSingleDocumentIsReadAndWrittenShardedOnItsFirstWrite() async throws {
        let storage = MemoryObjectStorage()
        let ledger = Self.sample()
        // As this fcmctl's predecessors wrote it: one version-4 document and its serial record.
        _ = try await storage.put("prod/state.json", StateFileFormat.encode(ledger), ifGenerationMatch: nil)
        _ = try await storage.put("prod/state.serial", StateAssembly.serialRecord(ledger), ifGenerationMatch: nil)
        let store = store(storage)
        let snapshot = try await store.read()
        let whole = try StateFileFormat.decode(StateFileFormat.encode(ledger), source: "whole").ledger
        #expect(snapshot.ledger == whole && snapshot.warnings.isEmpty)
        var next = snapshot.ledger
        next.serial = 4
        _ = try await store.write(next, replacing: snapshot.version)
        let index = String(decoding: try #require(try await storage.get("prod/state.json")).bytes, as: UTF8.self)
        #expect(index.hasPrefix("{\n\"version\": 5,\n") && index.contains("\"shard_count\": 8"))
        #expect(try await shardNames(storage).count == 8)
        let reread = try await store.read()
        #expect(reread.ledger == next && reread.version?.serial == 4)
        // `state push` refuses the index itself, and says where the whole document comes from.
        #expect { try StateFileFormat.decode(Array(index.utf8), source: "pushed.json") } throws: {
            "\($0)".contains("pushed.json: this is the index of a sharded state") && "\($0)".contains("`fcmctl state pull`")
        }
    }

    @Test func aSmallStateStaysOneDocumentAndABigOneIsCut() async throws {
        let storage = MemoryObjectStorage()
        let store = store(storage, bits: nil, target: 4096)
        var small = Ledger(lineage: "L", serial: 1)
        small.recordSubscription(Registration(value: "one", kind: .token), topic: "news")
        let first = try await store.write(small, replacing: nil)
        #expect(try StateFileFormat.decode(try #require(try await storage.get("prod/state.json")).bytes, source: "s").ledger == small)
        #expect(try await shardNames(storage).isEmpty)
        var big = Self.sample(devices: 2000)
        big.lineage = "L"
        big.serial = 2
        let second = try await store.write(big, replacing: first)
        let shards = try await shardNames(storage)
        #expect(shards.count >= 2 && shards.count & (shards.count - 1) == 0, "\(shards.count) shards")
        #expect(try await store.read().ledger == big)
        // Shrunk again: back to one document, and the shards it no longer needs are removed.
        small.serial = 3
        _ = try await store.write(small, replacing: second)
        #expect(try await shardNames(storage).isEmpty)
        #expect(try await store.read().ledger == small)
    }

    @Test func aWritePutsOnlyTheShardsThatChanged() async throws {
        let storage = CountingStorage()
        let store = store(storage, bits: 4)
        var ledger = Self.sample()
        ledger.serial = 1
        let first = try await store.write(ledger, replacing: nil)
        #expect(storage.shardPuts == 16)
        storage.reset()
        ledger.serial = 2
        ledger.recordSubscription(Registration(value: "tok5:APA91b" + String(repeating: "x", count: 40), kind: .token), topic: "new-topic")
        let second = try await store.write(ledger, replacing: first)
        // One shard, the index, the serial record; and the one shard it replaced is removed.
        #expect(storage.shardPuts == 1 && storage.puts == 3, "\(storage.log)")
        #expect(storage.shardDeletes == 1)
        #expect(try await shardNames(storage).count == 16)
        storage.reset()
        // A group change touches the group's shard alone.
        ledger.serial = 3
        ledger.groups["group-4"]?.protect = true
        _ = try await store.write(ledger, replacing: second)
        #expect(storage.shardPuts == 1 && storage.puts == 3, "\(storage.log)")
        // No state bytes are read to write: the condition is the index's generation.
        #expect(storage.shardGets == 0, "\(storage.log)")
        #expect(try await store.read().ledger == ledger)
    }

    @Test func aMissingShardIsAnErrorNamingIt() async throws {
        let storage = MemoryObjectStorage()
        let store = store(storage)
        _ = try await store.write(Self.sample(), replacing: nil)
        let victim = try #require(try await shardNames(storage).dropFirst(2).first)
        try await storage.delete(victim, ifGenerationMatch: nil)
        await #expect { try await store.read() } throws: {
            "\($0)".contains("gs://memory/\(victim): this shard of the state, named by its index gs://memory/prod/state.json, is missing")
        }
        // What `state push --force` asks first needs the index alone.
        #expect(try await store.storedVersion()?.serial == 3)
    }

    @Test func aTamperedShardIsAnErrorNamingIt() async throws {
        let directory = try ScratchDirectory()
        let path = directory.statePath
        let store = LocalStateStore(path: path, policy: ShardPolicy(fixedBits: 2))
        _ = try await store.write(Self.sample(), replacing: nil)
        let shards = try FileManager.default.contentsOfDirectory(atPath: path + ".shards").sorted()
        #expect(shards.count == 4)
        let victim = path + ".shards/" + shards[1]
        var text = try String(contentsOfFile: victim, encoding: .utf8)
        text = text.replacingOccurrences(of: "\"device-", with: "\"devicE-")
        try text.write(toFile: victim, atomically: true, encoding: .utf8)
        await #expect { try await store.read() } throws: {
            "\($0)".contains("\(victim): this shard of the state does not match its SHA-256 and size in the index \(path)")
        }
    }

    /// Every byte of an index changed, one at a time: each change is refused or reads back as the same records
    /// (as StateDamageTests does for a document), never as fewer.
    @Test func everyByteOfTheIndexIsCoveredByItsChecks() async throws {
        let storage = MemoryObjectStorage()
        let store = store(storage, bits: 2)
        _ = try await store.write(Self.sample(devices: 20), replacing: nil)
        let original = try #require(try await storage.get("prod/state.json")).bytes
        let expected = try await store.read().ledger
        var refused = 0
        for position in original.indices {
            var damaged = original
            damaged[position] = damaged[position] == UInt8(ascii: "4") ? UInt8(ascii: "6") : UInt8(ascii: "4")
            _ = try await storage.put("prod/state.json", damaged, ifGenerationMatch: nil)
            do {
                let read = try await store.read().ledger
                #expect(read == expected, "byte \(position) changed read as other records")
            } catch {
                refused += 1
            }
        }
        #expect(refused > original.count * 9 / 10, "\(refused) of \(original.count)")
        // The refusals were the damage's: the index as written still reads.
        _ = try await storage.put("prod/state.json", original, ifGenerationMatch: nil)
        #expect(try await store.read().ledger == expected)
    }

    /// Killed after putting new shards and before the index: the old index still names whole old shards.
    @Test func aWriteStoppedBeforeTheIndexLeavesTheOldStateWhole() async throws {
        let storage = CountingStorage()
        let store = store(storage, bits: 3)
        var ledger = Self.sample()
        ledger.serial = 1
        let first = try await store.write(ledger, replacing: nil)
        let before = try await store.read().ledger
        storage.failPutsOf = "prod/state.json"
        var next = ledger
        next.serial = 2
        for number in 0..<50 {
            next.recordSubscription(Registration(value: "tok\(number):APA91b" + String(repeating: "x", count: 40), kind: .token), topic: "more")
        }
        await #expect(throws: StateError.self) { try await store.write(next, replacing: first) }
        #expect(storage.shardPuts > 0)
        storage.failPutsOf = nil
        let after = try await store.read()
        #expect(after.ledger == before && after.version?.serial == 1)
        // And the next write goes through on the version read.
        _ = try await store.write(next, replacing: after.version)
        #expect(try await store.read().ledger == next)
    }

    /// A reader without the lock (plan) whose index is replaced, and its shards removed, while it reads them
    /// reads again rather than calling the state damaged.
    @Test func aReaderOvertakenByAWriterReadsAgain() async throws {
        let storage = CountingStorage()
        let store = store(storage, bits: 3)
        var ledger = Self.sample()
        ledger.serial = 1
        let first = try await store.write(ledger, replacing: nil)
        var emptied = ledger
        emptied.serial = 2
        emptied.topics = [:]
        let next = emptied
        let writer = self.store(storage, bits: 3)
        storage.beforeFirstShardGet = { _ = try? await writer.write(next, replacing: first) }
        let snapshot = try await store.read()
        #expect(snapshot.ledger.topics.isEmpty && snapshot.version?.serial == 2)
    }
}

/// A bucket in memory that counts what is done to it, and fails or interrupts where a test says.
final class CountingStorage: ObjectStorage {
    let inner = MemoryObjectStorage()
    private let state = Mutex<(log: [String], failPutsOf: String?, hook: (@Sendable () async -> Void)?)>(([], nil, nil))

    var displayName: String { inner.displayName }
    var log: [String] { state.withLock { $0.log } }
    var puts: Int { log.filter { $0.hasPrefix("put ") }.count }
    var shardPuts: Int { log.filter { $0.hasPrefix("put ") && $0.contains(".shards/") }.count }
    var shardGets: Int { log.filter { $0.hasPrefix("get ") && $0.contains(".shards/") }.count }
    var shardDeletes: Int { log.filter { $0.hasPrefix("delete ") && $0.contains(".shards/") }.count }
    func reset() { state.withLock { $0.log = [] } }

    var failPutsOf: String? {
        get { state.withLock { $0.failPutsOf } }
        set { state.withLock { $0.failPutsOf = newValue } }
    }

    /// Runs once, before the first shard is read.
    var beforeFirstShardGet: (@Sendable () async -> Void)? {
        get { state.withLock { $0.hook } }
        set { state.withLock { $0.hook = newValue } }
    }

    func get(_ name: String) async throws -> StoredObject? {
        if name.contains(".shards/"),
            let hook = state.withLock({ value -> (@Sendable () async -> Void)? in
                defer { value.hook = nil }
                return value.hook
            })
        {
            await hook()
        }
        state.withLock { $0.log.append("get \(name)") }
        return try await inner.get(name)
    }

    func put(_ name: String, _ bytes: [UInt8], ifGenerationMatch: Int64?) async throws -> Int64 {
        if state.withLock({ $0.failPutsOf == name }) { throw ObjectStorageError.failed("killed (injected)") }
        state.withLock { $0.log.append("put \(name)") }
        return try await inner.put(name, bytes, ifGenerationMatch: ifGenerationMatch)
    }

    func delete(_ name: String, ifGenerationMatch: Int64?) async throws {
        state.withLock { $0.log.append("delete \(name)") }
        try await inner.delete(name, ifGenerationMatch: ifGenerationMatch)
    }

    func list(prefix: String) async throws -> [String] { try await inner.list(prefix: prefix) }
}
