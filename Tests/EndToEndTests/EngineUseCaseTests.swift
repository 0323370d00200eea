import FCMClient
import FCMCore
import FCMEngine
import FCMManifest
import FCMReconcile
import FCMState
import FCMTestSupport
import Foundation
import Synchronization
import Testing

/// The engine's use cases called as the commands call them, against the in-memory FCM and state store.
@Suite struct EngineUseCaseTests {
    let kiosk = Registration(value: "kiosk-nyc-001:APA91bE8xKq2Rv0sWmYd3TfLpNcJh7Ug", kind: .token)
    let phone = Registration(value: "fGw0qy4TGgk:APA91bHun4MxP5egoKMwt2KZFBaFUH-1RYqx", kind: .token)
    let stray = Registration(value: "stray-0001:APA91bStrayStrayStray", kind: .token)

    func session(_ fake: FakeWorld, project: ProjectBinding? = nil, notices: Notices = .silent) -> Session {
        SessionOpener(world: fake.world, environment: [:], notices: notices).open(settings: RunSettings(), statePath: "/s", project: project)
    }

    /// A state holding a group, two subscriptions of one topic and one of another, at serial 1.
    func seeded(_ fake: FakeWorld) async throws -> Ledger {
        var ledger = Ledger(serial: 0)
        ledger.recordGroup("family", members: [phone])
        ledger.recordSubscription(kiosk, topic: "news")
        ledger.recordSubscription(phone, topic: "news")
        ledger.recordSubscription(kiosk, topic: "weather")
        ledger.serial = 1
        _ = try await fake.store("/s").write(ledger, replacing: nil)
        return ledger
    }

    @Test func stateRemovalForgetsEachAddressInOneWriteAndCountsRecords() async throws {
        let fake = FakeWorld()
        _ = try await seeded(fake)
        let removal = try await session(fake).removeFromState(
            [.topic("news"), .group("family"), .subscription(topic: "weather", registration: kiosk.value)], lock: true, lockTimeout: .zero)
        #expect(removal.removed == 4)
        #expect(removal.serial == 2)
        let after = try await fake.store("/s").read().ledger
        #expect(after.serial == 2)
        #expect(after.groups.isEmpty && after.topics.values.allSatisfy(\.isEmpty))
        #expect(fake.fcm.requests.isEmpty, "state rm asks FCM nothing")
    }

    @Test func stateRemovalOfAnAbsentAddressWritesNothing() async throws {
        let fake = FakeWorld()
        let before = try await seeded(fake)
        await #expect(throws: EngineFailure.self) {
            try await session(fake).removeFromState([.topic("news"), .topic("absent")], lock: true, lockTimeout: .zero)
        }
        let after = try await fake.store("/s").read().ledger
        #expect(after.serial == 1)
        #expect(after.hasSameRecords(as: before))
        // The lock was released on the way out: a second removal takes it.
        #expect(try await session(fake).removeFromState([.topic("news")], lock: true, lockTimeout: .zero).removed == 2)
    }

    @Test func commitBindsTheRunsProjectAndWritesTheNextSerial() async throws {
        let fake = FakeWorld()
        let store = fake.store("/s")
        let opened = session(fake, project: ProjectBinding(id: "acme-prod", senderId: "42"))
        var ledger = Ledger(serial: 6)
        let version = try await opened.commit(&ledger, to: store, replacing: nil)
        #expect(version.serial == 7 && ledger.serial == 7)
        let read = try await store.read().ledger
        #expect(read.project == ProjectBinding(id: "acme-prod", senderId: "42"))
        // Compare-and-swap: a commit over a version that is no longer the state's is refused.
        var stale = read
        _ = try await opened.commit(&stale, to: store, replacing: version)
        var late = read
        await #expect(throws: (any Error).self) { try await opened.commit(&late, to: store, replacing: version) }
    }

    /// The dry run lists `Applier.order`; apply sends the same requests in the same order.
    @Test func theDryRunOrderIsTheOrderApplySends() async throws {
        let fake = FakeWorld()
        // A subscription fcmctl recorded that the manifest no longer declares: the plan removes it.
        var ledger = Ledger(serial: 0)
        ledger.recordSubscription(stray, topic: "weather-nyc")
        _ = try await fake.store("/s").write(ledger, replacing: nil)
        fake.fcm.subscribe(stray, to: "weather-nyc")
        let loaded = try #require(
            ManifestStage.load([PlanApplyTests.quickstart], outsidePaths: .anywhere, environment: [:]).loaded)
        let desired = loaded.desiredState()
        let opened = session(fake)
        let store = opened.openStore()
        let computed = try await opened.computePlan(desired, service: fake.fcm, store: store)
        let order = Applier.order(of: computed.plan, batchSize: fake.fcm.topicBatchSize)
        let expected = order.requests.flatMap { request -> [String] in
            switch request {
            case .groupStep(let change, let step): ["POST \(Address.group(change.name)) \(step.operation) \(step.registrations.count)"]
            case .batch(let batch): batch.registrations.map { _ in "\(batch.action == .subscribe ? "POST" : "DELETE") \(Address.topic(batch.topic))" }
            }
        }
        #expect(expected.contains("DELETE topic/weather-nyc") && expected.first?.hasPrefix("POST group/") == true)
        let before = fake.fcm.mutatingRequests.count
        let lock = try await store.lock(operation: "apply", timeout: .zero)
        let outcome = try await ApplyTransaction(session: opened, service: fake.fcm, store: store, lock: lock).execute(computed, declared: desired)
        try await store.unlock(lock)
        #expect(outcome.report?.succeeded == true)
        #expect(outcome.serial == 2)
        #expect(fake.fcm.mutatingRequests.dropFirst(before).map { "\($0.method) \($0.what)" } == expected)
    }

    @Test func importSubjectsAreTheListedRegistrationsOnceEachSorted() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("fcmctl-subjects-\(UUID().uuidString)").path
        defer { unlink(file) }
        try "# listed by hand\n\(stray.value)\n  \(kiosk.value)  \n\n\(stray.value)\n".write(toFile: file, atomically: true, encoding: .utf8)
        guard
            case .subscriptions(let listed) = try ImportSubject.subscriptions(
                listedIn: file, desired: DesiredState(project: ProjectSettings(id: "p", senderId: "1")))
        else {
            Issue.record("not a subscriptions import")
            return
        }
        #expect(listed == [kiosk, stray].sorted())
        #expect(throws: EngineFailure.self) {
            try ImportSubject.subscriptions(listedIn: nil, desired: DesiredState(project: ProjectSettings(id: "p", senderId: "1")))
        }
        #expect(throws: EngineFailure.self) {
            try ImportSubject.subscriptions(listedIn: file + ".missing", desired: DesiredState(project: ProjectSettings(id: "p", senderId: "1")))
        }
    }

    @Test func theMigrationFanOutCheckStopsAtTheFirstGroupWithAFailure() async throws {
        let fake = FakeWorld()
        var desired = DesiredState(project: ProjectSettings(id: "p", senderId: "1"))
        desired.localGroups["a"] = DesiredGroup(name: "a", members: [kiosk, stray])
        desired.localGroups["b"] = DesiredGroup(name: "b", members: [phone])
        desired.localGroups["c"] = DesiredGroup(name: "c", members: [kiosk])
        let sender = FakeSender(unregistered: [stray], failing: [phone])
        let reports = Mutex<[FanOutReport]>([])
        await #expect(throws: EngineFailure.self) {
            try await session(fake).checkFanOut(["a", "b", "c"], desired: desired, sender: sender) { report in
                reports.withLock { $0.append(report) }
            }
        }
        let seen = reports.withLock { $0 }
        #expect(seen.map(\.group) == ["a", "b"])
        #expect(seen.map { [$0.sent, $0.unregistered, $0.failed] } == [[1, 1, 0], [0, 0, 1]])
        #expect(seen.allSatisfy { $0.validateOnly })
        #expect(sender.validatedOnly)
        #expect(GroupMigration.deletion(of: ["a", "b"]) == PlanTargeting(targets: [.group("a"), .group("b")], excludes: []))
    }
}

/// Answers `messages:send` as told: unregistered, failing, or sent.
final class FakeSender: MessageSender {
    let unregistered: Set<Registration>
    let failing: Set<Registration>
    private let sends = Mutex<[Bool]>([])

    init(unregistered: Set<Registration>, failing: Set<Registration>) {
        self.unregistered = unregistered
        self.failing = failing
    }

    /// Every message was sent with validate_only.
    var validatedOnly: Bool { sends.withLock { !$0.isEmpty && $0.allSatisfy { $0 } } }

    func send(_ message: OutgoingMessage, validateOnly: Bool) async throws -> String {
        sends.withLock { $0.append(validateOnly) }
        let value: String
        switch message.target {
        case .token(let token): value = token
        case .fid(let fid): value = fid
        default: value = ""
        }
        if unregistered.contains(where: { $0.value == value }) { throw FCMServiceError(status: 404, code: "UNREGISTERED", message: "gone") }
        if failing.contains(where: { $0.value == value }) { throw FCMServiceError(status: 500, code: "INTERNAL", message: "down") }
        return "projects/p/messages/\(value)"
    }
}
