import FCMCore
import FCMState
import FCMTestSupport
import Foundation
import Testing

/// The gcs store's protocol on a bucket in memory with GCS's generation rules; the end-to-end tests run
/// the same against fake-gcs-server (Tests/cli/test_gcs_state.py).
@Suite struct GCSStateStoreTests {
    let a = Registration(value: "a:APA91b", kind: .token)
    let me = ProcessIdentity(user: "alice", host: "runner-1", pid: getpid(), processStart: ProcessIdentity.startTime(of: getpid()))
    let other = ProcessIdentity(user: "bob", host: "runner-2", pid: 4242, processStart: 1)

    func store(
        _ bucket: MemoryObjectStorage, identity: ProcessIdentity? = nil, clock: ManualClock? = nil
    ) -> GCSStateStore {
        GCSStateStore(
            storage: bucket, prefix: "prod/", identity: identity ?? me, version: "test", clock: clock ?? SystemClock(),
            pollInterval: .milliseconds(10), renewsInBackground: clock == nil)
    }

    @Test func aRetriedLockCreateThatSucceededIsOurs() async throws {
        let bucket = MemoryObjectStorage()
        bucket.commitThenFail = true  // the create took effect, but the retry saw 412
        let store = store(bucket)
        let lock = try await store.lock(operation: "apply", timeout: .zero)
        #expect(try await store.currentLock()?.id == lock.info.id)
        try await store.unlock(lock)
        #expect(try await store.currentLock() == nil)
    }

    @Test func anotherRunnersLockHoldsUntilItsLeaseExpires() async throws {
        let bucket = MemoryObjectStorage()
        let clock = ManualClock()
        let theirs = try await store(bucket, identity: other, clock: clock).lock(operation: "apply", timeout: .zero)
        await #expect { try await store(bucket, clock: clock).lock(operation: "plan", timeout: .zero) } throws: {
            ($0 as? StateLockedError)?.holder.id == theirs.info.id
        }
        clock.advance(31)  // their lease (30 s) ran out without a renewal
        let ours = try await store(bucket, clock: clock).lock(operation: "apply", timeout: .zero)
        #expect(try await store(bucket).currentLock()?.id == ours.info.id)
    }

    @Test func everyWriteIsConditionalOnTheGenerationRead() async throws {
        let bucket = MemoryObjectStorage()
        let store = store(bucket)
        var ledger = Ledger(lineage: "L", serial: 1)
        ledger.recordSubscription(a, topic: "news")
        let first = try await store.write(ledger, replacing: nil)
        #expect(first.generation != nil)
        // Someone else rewrites the object (same bytes, a new generation).
        let stored = try #require(try await bucket.get("prod/state.json"))
        _ = try await bucket.put("prod/state.json", stored.bytes, ifGenerationMatch: nil)
        ledger.serial = 2
        await #expect { try await store.write(ledger, replacing: first) } throws: {
            "\($0)".contains("changed while this run worked")
        }
        #expect(try await store.read().version?.serial == 1)
        // A state that was never there must not exist when written as the first one.
        await #expect(throws: StateConflictError.self) { try await store.write(Ledger(lineage: "L", serial: 1), replacing: nil) }
    }

    @Test func journalSegmentsOfAKilledRunAreReplayedThenFolded() async throws {
        let bucket = MemoryObjectStorage()
        let store = store(bucket)
        let base = try await store.write(Ledger(lineage: "L", serial: 1), replacing: nil)
        let journal = try await store.openJournal(base: base, expectedBytes: 800)
        let b = Registration(value: "b:APA91b", kind: .token)
        try await journal.append([
            .intent(id: 1, .subscribed(topic: "news", registration: a)), .intent(id: 2, .subscribed(topic: "news", registration: b)),
        ])
        try await journal.append([.done(ids: [1])])
        // The run is killed here. The next reader sees one record and one pending intent.
        let snapshot = try await store.read()
        #expect(snapshot.ledger.managedSubscribers(of: "news") == [a])
        #expect(snapshot.ledger.pending.subscriptions["news"] == [b])
        #expect(snapshot.needsWrite && snapshot.pendingIntents == 1)
        await #expect { _ = try await store.openJournal(base: base, expectedBytes: 400) } throws: { "\($0)".contains("nothing was sent") }
        var next = snapshot.ledger
        next.serial = 2
        _ = try await store.write(next, replacing: snapshot.version)
        #expect(try await bucket.list(prefix: "prod/journal/").isEmpty)
        let after = try await store.read()
        #expect(after.replayedEntries == 0 && after.ledger.pending.subscriptions["news"] == [b])
    }
}
