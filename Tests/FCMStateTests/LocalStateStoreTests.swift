import FCMCore
import FCMState
import Foundation
import Testing

final class ScratchDirectory: @unchecked Sendable {
    let path: String

    init() throws {
        path = FileManager.default.temporaryDirectory.appendingPathComponent("fcmctl-state-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    var statePath: String { path + "/.fcmctl/state.json" }
}

final class Warnings: @unchecked Sendable {
    private let lock = NSLock()
    private var lines: [String] = []
    func append(_ line: String) { lock.withLock { lines.append(line) } }
    var all: [String] { lock.withLock { lines } }
}

@Suite struct LocalStateStoreTests {
    let a = Registration(value: "a:APA91b", kind: .token)
    let b = Registration(value: "b:APA91b", kind: .token)
    let me = ProcessIdentity(user: "alice", host: "ci-runner-1", pid: getpid(), processStart: ProcessIdentity.startTime(of: getpid()))

    func store(
        _ scratch: ScratchDirectory, identity: ProcessIdentity? = nil, lease: TimeInterval = 30, warnings: Warnings = Warnings(),
        clock: ManualClock? = nil
    ) -> LocalStateStore {
        LocalStateStore(
            path: scratch.statePath, lease: lease, identity: identity ?? me, version: "test", warn: { warnings.append($0) },
            clock: clock ?? SystemClock(), renewsInBackground: clock == nil)
    }

    @Test func writeIsCompareAndSwapOnLineageAndSerial() async throws {
        let scratch = try ScratchDirectory()
        let store = store(scratch)
        #expect(try await store.read().version == nil)
        var ledger = Ledger(lineage: "L", serial: 1)
        ledger.recordSubscription(a, topic: "news")
        let first = try await store.write(ledger, replacing: nil)
        #expect(first == StateVersion(lineage: "L", serial: 1))
        // A second writer that read nothing, or read serial 1 after it changed, loses and writes nothing.
        await #expect(throws: StateConflictError.self) { try await store.write(Ledger(lineage: "L", serial: 1), replacing: nil) }
        ledger.serial = 2
        _ = try await store.write(ledger, replacing: first)
        ledger.serial = 3
        await #expect { try await store.write(ledger, replacing: first) } throws: {
            "\($0)".contains("expected serial 1 of lineage L and found serial 2")
        }
        // A write must move forward on the same lineage unless forced.
        await #expect(throws: StateConflictError.self) {
            try await store.write(Ledger(lineage: "other", serial: 9), replacing: StateVersion(lineage: "L", serial: 2))
        }
        let snapshot = try await store.read()
        #expect(snapshot.version == StateVersion(lineage: "L", serial: 2))
        #expect(snapshot.ledger.managedSubscribers(of: "news") == [a])
        let mode = try FileManager.default.attributesOfItem(atPath: scratch.statePath)[.posixPermissions] as? NSNumber
        #expect(mode?.intValue == 0o600)
        let directoryMode = try FileManager.default.attributesOfItem(atPath: scratch.path + "/.fcmctl")[.posixPermissions] as? NSNumber
        #expect(directoryMode?.intValue == 0o700)
    }

    @Test func restoredOlderCopyIsRefusedNamingBothSerials() async throws {
        let scratch = try ScratchDirectory()
        let store = store(scratch)
        _ = try await store.write(Ledger(lineage: "L", serial: 4), replacing: nil)
        let backup = try Data(contentsOf: URL(fileURLWithPath: scratch.statePath))
        _ = try await store.write(Ledger(lineage: "L", serial: 5), replacing: StateVersion(lineage: "L", serial: 4))
        try backup.write(to: URL(fileURLWithPath: scratch.statePath))
        await #expect { try await store.read() } throws: { "\($0)".contains("has serial 4, but this store last wrote serial 5") }
        // A deliberate roll-back goes through with force and is accepted afterwards.
        _ = try await store.write(Ledger(lineage: "L", serial: 4), replacing: StateVersion(lineage: "L", serial: 4), force: true)
        #expect(try await store.read().version?.serial == 4)
    }

    @Test func journalSurvivesAndIsFoldedInByTheNextWrite() async throws {
        let scratch = try ScratchDirectory()
        let store = store(scratch)
        let base = try await store.write(Ledger(lineage: "L", serial: 1), replacing: nil)
        let journal = try await store.openJournal(base: base, expectedBytes: 4000)
        try await journal.append([
            .intent(id: 1, .subscribed(topic: "news", registration: a)), .intent(id: 2, .subscribed(topic: "news", registration: b)),
        ])
        try await journal.append([.done(ids: [1])])
        // The process "dies" here: a fresh store sees the record and the open intent.
        let snapshot = try await self.store(scratch).read()
        #expect(snapshot.ledger.managedSubscribers(of: "news") == [a])
        #expect(snapshot.ledger.pending.subscriptions == ["news": [b]])
        // A new journal is refused while this one is not folded in.
        await #expect { try await store.openJournal(base: base, expectedBytes: 400) } throws: { "\($0)".contains("not in the state yet") }
        var ledger = snapshot.ledger
        ledger.serial = 2
        _ = try await store.write(ledger, replacing: snapshot.version)
        #expect(!FileManager.default.fileExists(atPath: store.journalPath))
        let after = try await store.read()
        #expect(after.ledger.pending.subscriptions == ["news": [b]])
        #expect(after.replayedEntries == 0)
    }

    @Test func secondLockerIsRefusedWithTheHolder() async throws {
        let scratch = try ScratchDirectory()
        let first = store(scratch)
        let lock = try await first.lock(operation: "apply", timeout: .zero)
        let other = ProcessIdentity(user: "bob", host: "ci-runner-1", pid: getpid(), processStart: me.processStart)
        await #expect {
            try await store(scratch, identity: other).lock(operation: "plan", timeout: .milliseconds(300))
        } throws: { error in
            guard let locked = error as? StateLockedError else { return false }
            return locked.holder.id == lock.info.id && "\(locked)".contains("alice@ci-runner-1 (pid \(getpid())), operation apply")
                && "\(locked)".contains("fcmctl state unlock \(lock.info.id)")
        }
        try await first.unlock(lock)
        let second = try await store(scratch, identity: other).lock(operation: "plan", timeout: .zero)
        #expect(second.info.who == "bob@ci-runner-1")
    }

    @Test func lockOfADeadProcessOnThisHostIsTakenOverAtOnce() async throws {
        let scratch = try ScratchDirectory()
        // A child that exits at once: its pid is then dead (or, if reused, started at another time).
        let child = Process()
        child.executableURL = URL(fileURLWithPath: "/bin/true")
        try child.run()
        child.waitUntilExit()
        let dead = ProcessIdentity(user: "alice", host: me.host, pid: child.processIdentifier, processStart: 1)
        _ = try await store(scratch, identity: dead).lock(operation: "apply", timeout: .zero)
        let warnings = Warnings()
        let lock = try await store(scratch, warnings: warnings).lock(operation: "apply", timeout: .zero)
        #expect(lock.info.pid == getpid())
        #expect(warnings.all.count == 1 && warnings.all[0].contains("that process is gone"))
    }

    @Test func lockOfAnotherHostIsTakenOverOnlyAfterItsLeaseExpires() async throws {
        let scratch = try ScratchDirectory()
        let elsewhere = ProcessIdentity(user: "bob", host: "ci-runner-2", pid: 1, processStart: nil)
        _ = try await store(scratch, identity: elsewhere, lease: 60, clock: ManualClock(wallStart: Date(timeIntervalSinceNow: -120))).lock(
            operation: "apply", timeout: .zero)
        let warnings = Warnings()
        let lock = try await store(scratch, warnings: warnings).lock(operation: "apply", timeout: .zero)
        #expect(lock.info.who == "alice@ci-runner-1")
        #expect(warnings.all.contains { $0.contains("its lease expired") && $0.contains("bob") })

        // A live lease elsewhere is respected.
        let scratch2 = try ScratchDirectory()
        _ = try await store(scratch2, identity: elsewhere, lease: 60).lock(operation: "apply", timeout: .zero)
        await #expect(throws: StateLockedError.self) { try await store(scratch2).lock(operation: "apply", timeout: .zero) }
    }

    @Test func holderRenewsItsLeaseAndNoticesATakeover() async throws {
        let scratch = try ScratchDirectory()
        // Renewed every 0.5 s; expiries are stored to the second, so a renewal shows within about a second.
        let store = store(scratch, lease: 1.5)
        let lock = try await store.lock(operation: "apply", timeout: .zero)
        let firstExpiry = try #require(try await store.currentLock()).expires
        // Wait for the condition (a renewed expiry), bounded generously: a loaded CI machine is slow.
        let renewedBy = Date().addingTimeInterval(60)
        while try await store.currentLock()?.expires == firstExpiry, Date() < renewedBy { try await Task.sleep(for: .milliseconds(20)) }
        #expect(try await store.currentLock()!.expires > firstExpiry)
        _ = try await store.forceUnlock(id: lock.info.id)
        let noticedBy = Date().addingTimeInterval(60)
        while !lock.isLost, Date() < noticedBy { try await Task.sleep(for: .milliseconds(20)) }
        #expect(lock.isLost)
        try await store.unlock(lock)
    }

    @Test func forceUnlockNeedsTheRightId() async throws {
        let scratch = try ScratchDirectory()
        let store = store(scratch)
        let lock = try await store.lock(operation: "apply", timeout: .zero)
        await #expect { try await store.forceUnlock(id: "nope") } throws: { "\($0)".contains("not by lock id nope") }
        #expect(try await store.forceUnlock(id: lock.info.id).id == lock.info.id)
        #expect(try await store.currentLock() == nil)
        await #expect { try await store.forceUnlock(id: lock.info.id) } throws: { "\($0)".contains("is not locked") }
    }
}
