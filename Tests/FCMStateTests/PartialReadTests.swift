import FCMCore
import FCMState
import FCMTestSupport
import Testing

/// Reading only the shards whose declarations changed (`plan --refresh=changed` of a small change to a big
/// state): the shards chosen are exactly those the change touches, a write of the part read leaves the state
/// as a write of the whole would, and whatever a digest cannot vouch for is read whole.
@Suite struct PartialReadTests {
    static func token(_ number: Int) -> Registration {
        Registration(value: "part\(number):APA91b" + String(repeating: "p", count: 40), kind: .token)
    }

    /// 300 devices in news, every third in sports, one authoritative topic for every fifth.
    static func declared(_ edit: (inout [Int: Set<String>]) -> Void = { _ in }) -> DesiredState {
        var topicsOf: [Int: Set<String>] = [:]
        for number in 0..<300 {
            topicsOf[number] = ["news"]
            if number % 3 == 0 { topicsOf[number]!.insert("sports") }
            if number % 5 == 0 { topicsOf[number]!.insert("alerts") }
        }
        edit(&topicsOf)
        var desired = DesiredState(project: ProjectSettings(id: "acme", senderId: "42"))
        for (number, topics) in topicsOf {
            desired.deviceNames[token(number)] = "device-\(number)"
            for topic in topics {
                desired.topics[topic, default: DesiredTopic(name: topic, members: [], ownership: topic == "alerts" ? .authoritative : .additive)]
                    .members.insert(token(number))
            }
        }
        return desired
    }

    /// The ledger an apply of `desired` leaves: every declared subscription created, the declarations recorded.
    static func applied(_ desired: DesiredState, over start: Ledger = Ledger(lineage: "feedfacefeedfacefeedfacefeedface", serial: 0)) -> Ledger {
        var ledger = start
        for (name, topic) in desired.topics {
            for member in ledger.managedSubscribers(of: name) where !topic.members.contains(member) { ledger.forgetSubscription(member, topic: name) }
            for member in topic.members { ledger.recordSubscription(member, topic: name) }
        }
        for name in ledger.topics.keys where desired.topics[name] == nil {
            for member in ledger.managedSubscribers(of: name) { ledger.forgetSubscription(member, topic: name) }
        }
        ledger.recordApplied(desired, unsettled: [Registration]())
        return ledger
    }

    static let bits = 4

    func store(_ storage: any ObjectStorage) -> GCSStateStore {
        GCSStateStore(storage: storage, prefix: "prod", version: "test", pollInterval: .milliseconds(10), policy: ShardPolicy(fixedBits: Self.bits))
    }

    func shard(_ number: Int) -> Int { ShardDigests.shard(ofKey: AppliedDeclarations.fnv(Self.token(number)), bits: Self.bits) }

    @Test func onlyTheShardsAChangeTouchesAreReadAndWritingThemLeavesWhatAWholeWriteWould() async throws {
        let storage = MemoryObjectStorage()
        let store = store(storage)
        let before = Self.declared()
        var ledger = Self.applied(before)
        ledger.serial = 1
        let first = try await store.write(ledger, replacing: nil)

        // Nothing changed: no shard is read.
        let unchanged = DeclaredShardsBox()
        let quiet = try await store.read(selecting: unchanged.selector(for: before))
        #expect(quiet.ledger.slice == LedgerSlice(bits: Self.bits, loaded: []) && quiet.ledger.topics.isEmpty)
        #expect(unchanged.shards?.declaredOutside(try #require(quiet.ledger.slice)) == 300)

        // A pull request: device 7 joins sports, device 9 leaves the fleet, device 300 is new, device 10 leaves alerts.
        let after = Self.declared {
            $0[7]!.insert("sports")
            $0[9] = nil
            $0[300] = ["news"]
            $0[10]!.remove("alerts")
        }
        let touched = Set([7, 9, 300, 10].map(shard))
        let box = DeclaredShardsBox()
        let snapshot = try await store.read(selecting: box.selector(for: after))
        let slice = try #require(snapshot.ledger.slice)
        #expect(slice.loaded == touched)
        let parts = StateShards.split(ledger, bits: Self.bits)
        var expected = Ledger(lineage: ledger.lineage, serial: ledger.serial)
        expected.project = ledger.project
        for number in touched.sorted() { StateShards.merge(parts[number], into: &expected) }
        expected.slice = slice
        expected.declarationsTrusted = true
        #expect(snapshot.ledger == expected)

        // The apply of the part: its declarations cut to the shards read, the same steps as on the whole.
        let shards = try #require(box.shards)
        let sliced = shards.slice(after, to: slice)
        #expect(Set(sliced.deviceNames.keys) == Set(after.deviceNames.keys.filter { slice.holds(key: AppliedDeclarations.fnv($0)) }))
        var part = Self.applied(sliced, over: snapshot.ledger)
        part.serial = 2
        _ = try await store.write(part, replacing: snapshot.version)
        var whole = Self.applied(after, over: ledger)
        whole.serial = 2
        let reread = try await store.read()
        #expect(reread.ledger.slice == nil)
        // As the store keeps it: a name of a registration recorded nowhere (device 9's) is not written.
        let other = self.store(MemoryObjectStorage())
        _ = try await other.write(whole, replacing: nil as StateVersion?)
        #expect(reread.ledger == (try await other.read()).ledger, "a write of the part read leaves the state a write of the whole would")
        #expect(reread.ledger.topics == whole.topics && reread.ledger.applied == whole.applied)
        #expect(reread.version?.serial == 2 && first.serial == 1)

        // The next plan of the same manifests reads nothing again.
        let next = try await store.read(selecting: DeclaredShardsBox().selector(for: after))
        #expect(next.ledger.slice?.loaded == [])
    }

    @Test func whatADigestCannotVouchForIsRead() async throws {
        let storage = MemoryObjectStorage()
        let store = store(storage)
        let desired = Self.declared()
        var ledger = Self.applied(desired)
        // A subscription recorded outside an apply (an import, a targeted apply) that the manifests do not declare.
        ledger.recordSubscription(Self.token(4), topic: "imported")
        // A change an interrupted run may have made.
        ledger.pending.subscriptions["news"] = [Self.token(300)]
        ledger.serial = 1
        let version = try await store.write(ledger, replacing: nil)
        let read = try await store.read(selecting: DeclaredShardsBox().selector(for: desired))
        #expect(read.ledger.slice?.loaded == Set([shard(4), shard(300)]))
        #expect(read.ledger.topics["imported"] == [Self.token(4)] && read.ledger.pending.subscriptions["news"] == [Self.token(300)])

        // A state with device groups is read whole: a group's members are spread over the shards.
        var grouped = ledger
        grouped.recordGroup("kiosks", members: [Self.token(1), Self.token(2)])
        grouped.serial = 2
        _ = try await store.write(grouped, replacing: version)
        #expect(try await store.read(selecting: DeclaredShardsBox().selector(for: desired)).ledger.slice == nil)
    }

    /// A subscription the manifests no longer declare but an apply keeps (an `observe` topic never removes one):
    /// its registration is left unsettled, so its shard is read, as `--refresh=all` would read it.
    @Test func aKeptUndeclaredSubscriptionIsRead() async throws {
        let store = store(MemoryObjectStorage())
        var desired = Self.declared()
        desired.topics["watch"] = DesiredTopic(name: "watch", members: [Self.token(1)], ownership: .observe)
        var ledger = Self.applied(desired)
        // Device 6 was in `watch` once; the topic became observe-only and dropped it, so the apply kept it.
        ledger.topics["watch", default: []].insert(Self.token(6))
        ledger.recordApplied(desired, unsettled: [Registration]())
        ledger.serial = 1
        _ = try await store.write(ledger, replacing: nil)
        let read = try await store.read(selecting: DeclaredShardsBox().selector(for: desired))
        #expect(read.ledger.slice?.loaded == [shard(6)])
        #expect(read.ledger.topics["watch"]?.contains(Self.token(6)) == true)
    }

    /// A state written before the digests (a document, or by an older fcmctl) may hold a subscription a targeted
    /// apply recorded without unsettling its registration: its shards record no digest until an apply of the
    /// whole manifests, and it is read whole.
    @Test func aStateNotYetAppliedWholeByThisVersionIsReadWhole() async throws {
        let storage = MemoryObjectStorage()
        let store = store(storage)
        let desired = Self.declared()
        var ledger = Self.applied(desired)
        ledger.declarationsTrusted = false
        ledger.serial = 1
        let version = try await store.write(ledger, replacing: nil)
        let index = String(decoding: try #require(try await storage.get("prod/state.json")).bytes, as: UTF8.self)
        #expect(!index.contains("\"declared\""))
        let read = try await store.read(selecting: DeclaredShardsBox().selector(for: desired))
        #expect(read.ledger.slice == nil && !read.ledger.declarationsTrusted)
        // The next apply of the whole manifests records them.
        var next = read.ledger
        next.recordApplied(desired, unsettled: [Registration]())
        next.serial = 2
        _ = try await store.write(next, replacing: version)
        #expect(try await store.read(selecting: DeclaredShardsBox().selector(for: desired)).ledger.slice?.loaded == [])
    }

    @Test func aStateWithAJournalToFoldInIsReadWhole() async throws {
        let storage = MemoryObjectStorage()
        let store = store(storage)
        let desired = Self.declared()
        var ledger = Self.applied(desired)
        ledger.serial = 1
        let version = try await store.write(ledger, replacing: nil)
        let journal = try await store.openJournal(base: version, expectedBytes: 1000)
        try await journal.append([.intent(id: 1, .subscribed(topic: "news", registration: Self.token(301))), .done(ids: [1])])
        let read = try await store.read(selecting: DeclaredShardsBox().selector(for: desired))
        #expect(read.ledger.slice == nil && read.ledger.topics["news"]?.contains(Self.token(301)) == true)
    }

    @Test func aPartWrittenOverAStateCutOtherwiseIsRefused() async throws {
        let storage = MemoryObjectStorage()
        let store = store(storage)
        var ledger = Self.applied(Self.declared())
        ledger.serial = 1
        let version = try await store.write(ledger, replacing: nil)
        var part = Ledger(lineage: ledger.lineage, serial: 2)
        part.slice = LedgerSlice(bits: Self.bits + 1, loaded: [0])
        await #expect(throws: StateConflictError.self) { try await store.write(part, replacing: version) }
        #expect(try await store.read().ledger == ledger, "nothing was written")
    }
}
