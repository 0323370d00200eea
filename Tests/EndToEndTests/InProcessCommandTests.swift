import FCMCore
import FCMEngine
import FCMState
import FCMTestSupport
import FCMViews
import Foundation
import Testing

/// Every state and plan command, in-process, against the in-memory FCM and state store.
@Suite struct InProcessCommandTests {
    static let quickstart = PlanApplyTests.quickstart
    let common = ["-f", quickstart, "--state", "/fake/state.json"]
    let kiosk = Registration(value: "kiosk-nyc-001:APA91bE8xKq2Rv0sWmYd3TfLpNcJh7Ug", kind: .token)

    @Test func planApplyPlanAndStateCommandsRunAgainstFakes() async throws {
        let fake = FakeWorld()
        let first = await fake.run(["plan", "--detailed-exitcode"] + common)
        #expect(first.code == 2, "\(first.stderr)")
        #expect(first.stdout.contains("Plan: 1 group to create, 0 to delete; 2 members to add, 0 to remove; 3 subscriptions to add, 0 to remove."))
        let dry = await fake.run(["apply", "--dry-run"] + common)
        #expect(dry.code == 0 && dry.stdout.contains("memory://topic/industry-tech/kiosk-…h7Ug"), "\(dry.stdout)")
        #expect(fake.fcm.mutatingRequests.isEmpty)
        let apply = await fake.run(["apply", "--auto-approve"] + common)
        #expect(apply.code == 0, "\(apply.stderr)")
        #expect(fake.fcm.topics(of: kiosk) == ["industry-tech", "weather-nyc"])
        #expect(fake.fcm.members(of: "appUser-Chris")?.count == 2)
        #expect(await fake.run(["plan", "--detailed-exitcode"] + common).code == 0)

        #expect(await fake.run(["state", "list"] + common).stdout == "group/appUser-Chris\ntopic/industry-tech\ntopic/weather-nyc\n")
        #expect(await fake.run(["state", "show", "topic/weather-nyc"] + common).stdout.contains("subscriptions fcmctl created: 2"))
        let pulled = await fake.run(["state", "pull"] + common)
        #expect(try StateFileFormat.decode(Array(pulled.stdout.utf8), source: "pull").ledger.serial == 2)
        #expect(await fake.run(["state", "rm", "topic/weather-nyc"] + common).code == 0)
        #expect(await fake.run(["state", "unlock", "nope"] + common).code == 1)

        // Out-of-band changes are seen by the next plan.
        fake.fcm.unsubscribe(kiosk, from: "industry-tech")
        let drifted = await fake.run(["plan", "--detailed-exitcode"] + common)
        #expect(drifted.code == 2 && drifted.stdout.contains("~ topic/industry-tech  +1 −0"), "\(drifted.stdout)")
    }

    @Test func aSecondRunIsRefusedWithExitFourWhileTheFirstHoldsTheLock() async throws {
        let fake = FakeWorld()
        let lock = try await fake.store("/fake/state.json").lock(operation: "apply", timeout: .zero)
        let refused = await fake.run(["apply", "--auto-approve"] + common)
        #expect(refused.code == 4)
        #expect(refused.stderr.contains("lock id \(lock.info.id)"))
        #expect(fake.fcm.mutatingRequests.isEmpty)
    }
}
