import FCMCore
import FCMState
import Foundation
import Testing

/// What every state store must do, run against each of them: the in-memory store, the local store on a
/// temporary directory, and the gcs store against a real fake-gcs-server. Time is a ManualClock, so leases
/// expire and waits time out without waiting.
@Suite struct StoreConformanceTests {
    let a = Registration(value: "a:APA91b", kind: .token)
    let b = Registration(value: "b:APA91b", kind: .token)

    // MARK: Reading and writing

    @Test(arguments: StoreKind.allCases) func aFreshStateIsEmpty(_ kind: StoreKind) async throws {
        guard let fixture = try await StoreFixture.make(kind) else { return }
        let store = fixture.store()
        let snapshot = try await store.read()
        #expect(snapshot.version == nil && snapshot.replayedEntries == 0 && !snapshot.needsWrite)
        #expect(snapshot.ledger.managedSubscribers(of: "news").isEmpty)
        #expect(try await store.storedVersion() == nil)
        #expect(try await store.currentLock() == nil)
    }

    @Test(arguments: StoreKind.allCases) func writeIsCompareAndSwapOnTheVersionRead(_ kind: StoreKind) async throws {
        guard let fixture = try await StoreFixture.make(kind) else { return }
        let store = fixture.store()
        var ledger = Ledger(lineage: "L", serial: 1)
        ledger.recordSubscription(a, topic: "news")
        let first = try await store.write(ledger, replacing: nil)
        #expect(first.lineage == "L" && first.serial == 1)
        #expect(try await store.storedVersion() == first)
        // A writer that read nothing loses to one that wrote meanwhile.
        await #expect { try await store.write(Ledger(lineage: "L", serial: 1), replacing: nil) } throws: {
            $0 is StateConflictError && "\($0)".contains("changed while this run worked")
        }
        ledger.serial = 2
        let second = try await store.write(ledger, replacing: first)
        // So does one that read serial 1 after serial 2 was written; the message names both.
        ledger.serial = 3
        await #expect { try await store.write(ledger, replacing: first) } throws: {
            $0 is StateConflictError && "\($0)".contains("expected serial 1 of lineage L and found serial 2")
        }
        let snapshot = try await store.read()
        #expect(snapshot.version == second)
        #expect(snapshot.ledger.managedSubscribers(of: "news") == [a])
        // A version as a person or an older fcmctl states it (lineage and serial only) is compared too.
        ledger.serial = 3
        let third = try await store.write(ledger, replacing: StateVersion(lineage: "L", serial: 2))
        #expect(third.serial == 3)
    }

    @Test(arguments: StoreKind.allCases) func anotherLineageIsRefusedUnlessForced(_ kind: StoreKind) async throws {
        guard let fixture = try await StoreFixture.make(kind) else { return }
        let store = fixture.store()
        let first = try await store.write(Ledger(lineage: "L", serial: 1), replacing: nil)
        await #expect { try await store.write(Ledger(lineage: "other", serial: 9), replacing: first) } throws: {
            $0 is StateConflictError && "\($0)".contains("refusing to replace lineage L with other")
        }
        #expect(try await store.read().version?.lineage == "L")
        let forced = try await store.write(Ledger(lineage: "other", serial: 9), replacing: first, force: true)
        #expect(try await store.read().version == forced)
    }

    @Test(arguments: StoreKind.allCases) func theSerialMustMoveForwardUnlessForced(_ kind: StoreKind) async throws {
        guard let fixture = try await StoreFixture.make(kind) else { return }
        let store = fixture.store()
        let five = try await store.write(Ledger(lineage: "L", serial: 5), replacing: nil)
        for serial in [5, 4] {
            await #expect { try await store.write(Ledger(lineage: "L", serial: serial), replacing: five) } throws: {
                $0 is StateConflictError && "\($0)".contains("refusing serial \(serial), which is not newer than the stored 5")
            }
        }
        // A deliberate roll-back goes through with force and is read as the state afterwards.
        let four = try await store.write(Ledger(lineage: "L", serial: 4), replacing: five, force: true)
        #expect(try await store.read().version == four)
        // Even forced, the compare-and-swap holds.
        await #expect(throws: StateConflictError.self) { try await store.write(Ledger(lineage: "L", serial: 3), replacing: five, force: true) }
    }

    @Test(arguments: StoreKind.allCases) func anOlderCopyPutBackIsRefused(_ kind: StoreKind) async throws {
        guard let fixture = try await StoreFixture.make(kind) else { return }
        let store = fixture.store()
        let storage = store.manager.storage
        let name = store.manager.layout.state
        let four = try await store.write(Ledger(lineage: "L", serial: 4), replacing: nil)
        let backup = try #require(try await storage.get(name))
        _ = try await store.write(Ledger(lineage: "L", serial: 5), replacing: four)
        _ = try await storage.put(name, backup.bytes, ifGenerationMatch: nil)
        await #expect { try await fixture.store().read() } throws: {
            $0 is StateConflictError && "\($0)".contains("has serial 4, but this")
        }
        // A deleted state whose serial record remains is refused too, rather than read as a fresh start.
        try await storage.delete(name, ifGenerationMatch: nil)
        await #expect { try await fixture.store().read() } throws: { "\($0)".contains("is missing, yet the store still has its serial record") }
    }

    // MARK: Format version

    /// A state whose version was lowered after this store wrote it is refused, naming the state and the way
    /// out; the ones nothing in the file gives away (DowngradeMutants.looksGenuine) by the serial record,
    /// which names the format the store last wrote. `state push --force` (a forced write on the version read
    /// by its fields) then puts a state back, and it reads again.
    @Test(arguments: StoreKind.allCases) func aLoweredVersionIsRefused(_ kind: StoreKind) async throws {
        guard let fixture = try await StoreFixture.make(kind) else { return }
        let store = fixture.store()
        let storage = store.manager.storage
        let name = store.manager.layout.state
        let path = store.manager.layout.locate(name)
        let sample = DowngradeMutants.sample()
        _ = try await store.write(sample, replacing: nil)
        let mutants = DowngradeMutants.all(of: sample)
        var refused = 0
        for mutant in mutants {
            _ = try await storage.put(name, Array(mutant.text.utf8), ifGenerationMatch: nil)
            do {
                _ = try await fixture.store().read()
                Issue.record("\(mutant) was read")
            } catch {
                refused += 1
                let message = "\(error)"
                #expect(message.hasPrefix(path) && message.contains("`fcmctl state push --force FILE`"), "\(mutant): \(message)")
                if mutant.looksGenuine {
                    #expect(message.contains("but this store last wrote format version \(StateFileFormat.currentVersion)"), "\(message)")
                }
            }
        }
        #expect(refused == mutants.count && refused == 96)
        // The way out: a forced write over whatever is there.
        let stored = try #require(try await store.storedVersion())
        var pushed = sample
        pushed.serial = 42
        _ = try await store.write(pushed, replacing: stored, force: true)
        #expect(try await fixture.store().read().ledger == pushed)
    }

    /// A genuine older state (no serial record naming a newer format: a store an older fcmctl wrote) is read
    /// and upgraded by the next write, which records the format it wrote.
    @Test(arguments: StoreKind.allCases) func aGenuineOlderStateIsUpgraded(_ kind: StoreKind) async throws {
        guard let fixture = try await StoreFixture.make(kind) else { return }
        let store = fixture.store()
        let storage = store.manager.storage
        let mutants = DowngradeMutants.all().filter { $0.looksGenuine && !$0.topicDeleted }
        #expect(mutants.count == 2)
        for mutant in mutants {
            _ = try await storage.put(store.manager.layout.state, Array(mutant.text.utf8), ifGenerationMatch: nil)
            // As an fcmctl that wrote no format in its serial record left it.
            _ = try await storage.put(
                store.manager.layout.serial, Array(#"{"lineage":"0123abcd0123abcd0123abcd0123abcd","serial":41}"#.utf8), ifGenerationMatch: nil)
            let snapshot = try await fixture.store().read()
            #expect(
                snapshot.needsWrite && snapshot.warnings.contains { $0.contains("state format version \(mutant.version!) will be upgraded to 4") })
            #expect(snapshot.ledger.topics == DowngradeMutants.sample().topics)
            var next = snapshot.ledger
            next.serial = 42
            _ = try await store.write(next, replacing: snapshot.version)
            // Written in the current layout (here the sharded one: an index naming four shards), and read back whole.
            let written = try #require(try await storage.get(store.manager.layout.state))
            #expect(String(decoding: written.bytes, as: UTF8.self).contains("\"version\": \(ShardIndex.version)"))
            let reread = try await fixture.store().read()
            #expect(reread.ledger.topics == DowngradeMutants.sample().topics && !reread.needsWrite && reread.warnings.isEmpty)
            let record = StateAssembly.recordedSerial(try await storage.get(store.manager.layout.serial)?.bytes)
            #expect(record?.format == StateFileFormat.currentVersion && record?.serial == 42)
            try await storage.delete(store.manager.layout.serial, ifGenerationMatch: nil)
        }
    }

    // MARK: Locking

    @Test(arguments: StoreKind.allCases) func aHeldLockRefusesOthersUntilReleased(_ kind: StoreKind) async throws {
        guard let fixture = try await StoreFixture.make(kind) else { return }
        let holder = fixture.store(as: StoreFixture.other)
        let lock = try await holder.lock(operation: "apply", timeout: .zero)
        #expect(try await fixture.store().currentLock() == lock.info)
        await #expect {
            try await fixture.store().lock(operation: "plan", timeout: .zero)
        } throws: { error in
            guard let locked = error as? StateLockedError else { return false }
            return locked.holder.id == lock.info.id && "\(locked)".contains("bob@runner-2 (pid 4242), operation apply")
                && "\(locked)".contains("fcmctl state unlock \(lock.info.id)")
        }
        try await holder.unlock(lock)
        #expect(try await fixture.store().currentLock() == nil)
        let mine = try await fixture.store().lock(operation: "plan", timeout: .zero)
        #expect(mine.info.who == "alice@runner-1" && mine.info.operation == "plan")
        #expect(!mine.isLost)
    }

    @Test(arguments: StoreKind.allCases) func waitingForALiveHolderEndsAtTheTimeout(_ kind: StoreKind) async throws {
        guard let fixture = try await StoreFixture.make(kind) else { return }
        let holder = fixture.store(as: StoreFixture.other, lease: 600)
        let lock = try await holder.lock(operation: "apply", timeout: .zero)
        let start = fixture.clock.now()
        await #expect { try await fixture.store().lock(operation: "plan", timeout: .seconds(5)) } throws: {
            ($0 as? StateLockedError)?.holder.id == lock.info.id
        }
        // It waited the timeout out (on the manual clock), polling in between, and not much longer.
        #expect(fixture.clock.now() - start >= 5 && fixture.clock.now() - start < 6)
        #expect(fixture.clock.sleeps.count >= 2)
    }

    @Test(arguments: StoreKind.allCases) func aWaiterTakesOverOnceTheHoldersLeaseRunsOut(_ kind: StoreKind) async throws {
        guard let fixture = try await StoreFixture.make(kind) else { return }
        let holder = fixture.store(as: StoreFixture.other)
        let theirs = try await holder.lock(operation: "apply", timeout: .zero)
        // Their lease is 30 s and nobody renews it: a wait of a minute outlasts it.
        let ours = try await fixture.store().lock(operation: "apply", timeout: .seconds(60))
        #expect(try await fixture.store().currentLock()?.id == ours.info.id)
        #expect(fixture.warnings.all.contains { $0.contains("took over the state lock \(theirs.info.id)") && $0.contains("its lease expired") })
        // The old holder finds out at its next renewal, and must stop.
        #expect(await holder.renew(theirs) == false)
        #expect(theirs.isLost)
        // Its release leaves the new holder's lock alone.
        try await holder.unlock(theirs)
        #expect(try await fixture.store().currentLock()?.id == ours.info.id)
    }

    @Test(arguments: StoreKind.allCases) func anExpiredLeaseIsTakenOverAtOnce(_ kind: StoreKind) async throws {
        guard let fixture = try await StoreFixture.make(kind) else { return }
        let holder = fixture.store(as: StoreFixture.other)
        let theirs = try await holder.lock(operation: "apply", timeout: .zero)
        await #expect(throws: StateLockedError.self) { try await fixture.store().lock(operation: "apply", timeout: .zero) }
        fixture.clock.advance(31)
        let ours = try await fixture.store().lock(operation: "apply", timeout: .zero)
        #expect(ours.info.id != theirs.info.id && !ours.isLost)
        #expect(ours.permits(seconds: 1, now: fixture.clock.now()))
    }

    @Test(arguments: StoreKind.allCases) func renewalKeepsTheLockPastItsFirstLease(_ kind: StoreKind) async throws {
        guard let fixture = try await StoreFixture.make(kind) else { return }
        let holder = fixture.store(as: StoreFixture.other)
        let lock = try await holder.lock(operation: "apply", timeout: .zero)
        let firstExpiry = try #require(try await holder.currentLock()).expires
        for _ in 0..<4 {
            fixture.clock.advance(20)
            #expect(await holder.renew(lock))
        }
        // 80 s after it was taken, a 30 s lease renewed every 20 s is still held, and known to be.
        #expect(try await holder.currentLock()!.expires > firstExpiry)
        #expect(lock.permits(seconds: 5, now: fixture.clock.now()) && !lock.isLost)
        await #expect(throws: StateLockedError.self) { try await fixture.store().lock(operation: "apply", timeout: .zero) }
        try await holder.unlock(lock)
        #expect(try await fixture.store().currentLock() == nil)
    }

    @Test(arguments: StoreKind.allCases) func aLockOfAGoneProcessOnThisHostIsTakenOverAtOnce(_ kind: StoreKind) async throws {
        guard let fixture = try await StoreFixture.make(kind) else { return }
        let child = Process()
        child.executableURL = URL(fileURLWithPath: "/bin/true")
        try child.run()
        child.waitUntilExit()
        let gone = ProcessIdentity(user: "alice", host: StoreFixture.me.host, pid: child.processIdentifier, processStart: 1)
        _ = try await fixture.store(as: gone).lock(operation: "apply", timeout: .zero)
        let lock = try await fixture.store().lock(operation: "apply", timeout: .zero)
        #expect(lock.info.pid == getpid())
        #expect(fixture.warnings.all.contains { $0.contains("that process is gone") })
    }

    @Test(arguments: StoreKind.allCases) func forceUnlockNeedsTheRightIdAndTheHolderNotices(_ kind: StoreKind) async throws {
        guard let fixture = try await StoreFixture.make(kind) else { return }
        let holder = fixture.store(as: StoreFixture.other)
        let lock = try await holder.lock(operation: "apply", timeout: .zero)
        let store = fixture.store()
        await #expect { try await store.forceUnlock(id: "nope") } throws: { "\($0)".contains("not by lock id nope; nothing was removed") }
        #expect(try await store.forceUnlock(id: lock.info.id) == lock.info)
        #expect(try await store.currentLock() == nil)
        await #expect { try await store.forceUnlock(id: lock.info.id) } throws: { "\($0)".contains("is not locked") }
        #expect(await holder.renew(lock) == false)
        #expect(lock.isLost && !lock.permits(seconds: 1, now: fixture.clock.now()))
    }

    // MARK: Journal

    @Test(arguments: StoreKind.allCases) func theJournalIsReplayedAndFoldedInByTheNextWrite(_ kind: StoreKind) async throws {
        guard let fixture = try await StoreFixture.make(kind) else { return }
        let store = fixture.store()
        let base = try await store.write(Ledger(lineage: "L", serial: 1), replacing: nil)
        let journal = try await store.openJournal(base: base, expectedBytes: 4000)
        try await journal.append([
            .intent(id: 1, .subscribed(topic: "news", registration: a)), .intent(id: 2, .subscribed(topic: "news", registration: b)),
        ])
        try await journal.append([.done(ids: [1])])
        #expect(await journal.bytesWritten > 0)
        // The process "dies" here: another store of the same state sees the record and the open intent.
        let snapshot = try await fixture.store().read()
        #expect(snapshot.ledger.managedSubscribers(of: "news") == [a])
        #expect(snapshot.ledger.pending.subscriptions == ["news": [b]])
        #expect(snapshot.replayedEntries > 0 && snapshot.pendingIntents == 1 && snapshot.needsWrite)
        // A new journal is refused while this one is not folded in.
        await #expect { try await store.openJournal(base: base, expectedBytes: 400) } throws: {
            "\($0)".contains("not in the state yet") && "\($0)".contains("nothing was sent")
        }
        var ledger = snapshot.ledger
        ledger.serial = 2
        _ = try await store.write(ledger, replacing: snapshot.version)
        #expect(try await store.manager.storage.list(prefix: store.manager.layout.journal).isEmpty)
        let after = try await fixture.store().read()
        #expect(after.replayedEntries == 0 && !after.needsWrite)
        #expect(after.ledger.pending.subscriptions == ["news": [b]])
        // And the next run may journal again.
        _ = try await store.openJournal(base: try #require(after.version), expectedBytes: 400)
    }

    /// What a run that could not write the state at its end finds of its journal: still there, folded into
    /// the state by a later write (which removed it), or removed without being folded in.
    @Test(arguments: StoreKind.allCases) func aJournalSaysWhatBecameOfIt(_ kind: StoreKind) async throws {
        guard let fixture = try await StoreFixture.make(kind) else { return }
        let store = fixture.store()
        let storage = store.manager.storage
        let base = try await store.write(Ledger(lineage: "L", serial: 1), replacing: nil)
        let journal = try await store.openJournal(base: base, expectedBytes: 4000)
        try await journal.append([.intent(id: 1, .subscribed(topic: "news", registration: a)), .done(ids: [1])])
        #expect(await journal.fate() == .kept)
        // Another runner reads it and writes: the write folds the journal in and removes it.
        let other = fixture.store(as: StoreFixture.other)
        var ledger = try await other.read().ledger
        ledger.serial = 2
        _ = try await other.write(ledger, replacing: try await other.read().version)
        #expect(await journal.fate() == .folded(base: 1, now: 2))
        #expect(try await other.read().ledger.managedSubscribers(of: "news") == [a])

        // A journal removed by hand, the state still where the run began: its records are lost.
        let second = try await store.openJournal(base: try #require(try await store.storedVersion()), expectedBytes: 4000)
        try await second.append([.intent(id: 1, .subscribed(topic: "news", registration: b))])
        for name in try await storage.list(prefix: store.manager.layout.journal) { try await storage.delete(name, ifGenerationMatch: nil) }
        guard case .lost(let why) = await second.fate() else {
            Issue.record("not lost")
            return
        }
        #expect(why.contains("is still at serial 2, where this run began"), "\(why)")
        // … and so are they when the state was replaced by another lineage.
        _ = try await store.write(Ledger(lineage: "M", serial: 9), replacing: try await store.storedVersion(), force: true)
        guard case .lost(let replaced) = await second.fate() else {
            Issue.record("not lost")
            return
        }
        #expect(replaced.contains("was replaced by one of lineage M, serial 9"), "\(replaced)")
    }

    /// A holder whose lease went a whole lease unrenewed (paused past it) writes no more journal: another run may
    /// have folded and removed its journal, and an append would be a stray in that run's store. Once renewed (the
    /// lock was still its own) it may again; once taken over, the renewal says so.
    @Test(arguments: StoreKind.allCases) func aLeaseRunOutUnrenewedStopsTheJournal(_ kind: StoreKind) async throws {
        guard let fixture = try await StoreFixture.make(kind) else { return }
        let store = fixture.store(lease: 30)
        let lock = try await store.lock(operation: "apply", timeout: .zero)
        let base = try await store.write(Ledger(lineage: "L", serial: 1), replacing: nil)
        let journal = try await store.openJournal(base: base, expectedBytes: 4000)
        try await journal.append([.intent(id: 1, .subscribed(topic: "news", registration: a))])
        fixture.clock.advance(31)
        await #expect { try await journal.append([.done(ids: [1])]) } throws: {
            "\($0)".contains("the state lock \(lock.info.id) went 30 s without a renewal") && "\($0)".contains("nothing more is written")
        }
        #expect(await store.stillHolds(lock), "nobody took it over: the renewal goes through")
        try await journal.append([.done(ids: [1])])
        fixture.clock.advance(31)
        _ = try await fixture.store(as: StoreFixture.other).lock(operation: "apply", timeout: .zero)
        #expect(await store.stillHolds(lock) == false && lock.isLost)
        await #expect(throws: StateError.self) { try await journal.append([.intent(id: 2, .subscribed(topic: "news", registration: b))]) }
    }

    @Test(arguments: StoreKind.allCases) func journalRecordsWithoutTheirStateAreRefused(_ kind: StoreKind) async throws {
        guard let fixture = try await StoreFixture.make(kind) else { return }
        let store = fixture.store()
        // fcmctl writes the state before it opens a journal: records without one mean the state was lost.
        let journal = try await store.openJournal(base: StateVersion(lineage: "L", serial: 0), expectedBytes: 400)
        try await journal.append([.intent(id: 1, .subscribed(topic: "news", registration: a)), .done(ids: [1])])
        await #expect { try await fixture.store().read() } throws: {
            $0 is StateConflictError && "\($0)".contains("is missing, yet the store still has journal records")
        }
    }
}
