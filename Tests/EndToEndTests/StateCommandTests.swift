import FCMCore
import FCMState
import FCMViews
import Foundation
import Testing

/// `fcmctl state …` after a real apply of the quickstart against the emulator.
@Suite struct StateCommandTests {
    static let kiosk = "kiosk-nyc-001:APA91bE8xKq2Rv0sWmYd3TfLpNcJh7Ug"

    @Test func listShowRemovePullPushAndUnlock() async throws {
        let emulator = try await InProcessEmulator()
        let workspace = try Workspace()
        let common = ["-f", PlanApplyTests.quickstart, "--state", workspace.statePath]
        #expect(await CLI.run(["apply", "--auto-approve"] + common, emulator: emulator).code == 0)

        let list = await CLI.run(["state", "list"] + common, emulator: nil)
        #expect(list.stdout == "group/appUser-Chris\ntopic/industry-tech\ntopic/weather-nyc\n", "\(list.stderr)")
        let members = await CLI.run(["state", "list", "topic/weather-nyc"] + common, emulator: nil)
        #expect(members.stdout == "topic/weather-nyc/fGw0qy…RYqx\ntopic/weather-nyc/kiosk-…h7Ug\n")
        let shown = await CLI.run(["state", "show", "group/appUser-Chris", "--show-tokens"] + common, emulator: nil)
        #expect(shown.stdout.contains("members: 2") && shown.stdout.contains("cR1rjyj4_KcAPA91bGusQ2 (fid)"), "\(shown.stdout)")

        // Forget one subscription: FCM keeps it, and it is no longer fcmctl's to remove.
        let before = try await emulator.requestLog().count
        let removed = await CLI.run(["state", "rm", "topic/industry-tech/\(Self.kiosk)"] + common, emulator: nil)
        #expect(removed.code == 0, "\(removed.stderr)")
        #expect(removed.stdout.contains("Removed 1 record") && removed.stdout.contains("(serial 3)"), "\(removed.stdout)")
        #expect(try await emulator.requestLog().count == before)
        #expect(try await emulator.topics(of: Self.kiosk) == ["industry-tech", "weather-nyc"])
        let missing = await CLI.run(["state", "rm", "topic/industry-tech/\(Self.kiosk)"] + common, emulator: nil)
        #expect(missing.code == 1 && missing.stderr.contains("is not in the state; nothing was removed"))
        #expect(await CLI.run(["state", "show", "nonsense"] + common, emulator: nil).code == 64)

        // pull → push: same serial refused, a higher one accepted, an older one only with --force.
        let pulled = await CLI.run(["state", "pull"] + common, emulator: nil)
        let decoded = try StateFileFormat.decode(Array(pulled.stdout.utf8), source: "pull").ledger
        #expect(decoded.serial == 3 && decoded.topics["industry-tech"] == nil)
        let file = workspace.url.appendingPathComponent("pulled.json").path
        try pulled.stdout.write(toFile: file, atomically: true, encoding: .utf8)
        let same = await CLI.run(["state", "push", file] + common, emulator: nil)
        #expect(same.code == 1 && same.stderr.contains("has serial 3, not higher than the stored serial 3"), "\(same.stderr)")
        var newer = decoded
        newer.serial = 10
        try Data(StateFileFormat.encode(newer)).write(to: URL(fileURLWithPath: file))
        #expect(await CLI.run(["state", "push", file] + common, emulator: nil).code == 0)
        var older = decoded
        older.serial = 5
        try Data(StateFileFormat.encode(older)).write(to: URL(fileURLWithPath: file))
        #expect(await CLI.run(["state", "push", file] + common, emulator: nil).code == 1)
        #expect(await CLI.run(["state", "push", "--force", file] + common, emulator: nil).code == 0)
        #expect(try await LocalStateStore(path: workspace.statePath).read().version?.serial == 5)

        // A restored older copy is refused with both serials named.
        var stale = decoded
        stale.serial = 4
        try Data(StateFileFormat.encode(stale)).write(to: URL(fileURLWithPath: workspace.statePath))
        let refused = await CLI.run(["plan"] + common, emulator: emulator)
        #expect(refused.code == 1)
        #expect(refused.stderr.contains("has serial 4, but this store last wrote serial 5"), "\(refused.stderr)")

        // unlock needs the id of the lock actually held.
        let store = LocalStateStore(path: workspace.statePath)
        let lock = try await store.lock(operation: "apply", timeout: .zero)
        let wrong = await CLI.run(["state", "unlock", "nope"] + common, emulator: nil)
        #expect(wrong.code == 1 && wrong.stderr.contains("not by lock id nope"), "\(wrong.stderr)")
        let right = await CLI.run(["state", "unlock", lock.info.id] + common, emulator: nil)
        #expect(right.code == 0 && right.stdout.contains("Removed the state lock \(lock.info.id)"), "\(right.stderr)")
        #expect(try await store.currentLock() == nil)
    }

    @Test func versionOneStateIsReadAndUpgradedByTheNextWrite() async throws {
        let emulator = try await InProcessEmulator()
        let workspace = try Workspace()
        let common = ["-f", PlanApplyTests.quickstart, "--state", workspace.statePath]
        try FileManager.default.createDirectory(
            atPath: (workspace.statePath as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        let v1 =
            #"{"groups":{},"lineage":"old-lineage","serial":7,"topics":{"industry-tech":[{"token":"kiosk-nyc-001:APA91bE8xKq2Rv0sWmYd3TfLpNcJh7Ug"}]},"version":1}"#
        try v1.write(toFile: workspace.statePath, atomically: true, encoding: .utf8)
        let apply = await CLI.run(["apply", "--auto-approve"] + common, emulator: emulator)
        #expect(apply.code == 0, "\(apply.stderr)")
        #expect(apply.stderr.contains("will be upgraded to \(StateFileFormat.currentVersion)"), "\(apply.stderr)")
        let stored = try StateFileFormat.decode(Array(try Data(contentsOf: URL(fileURLWithPath: workspace.statePath))), source: "s")
        #expect(stored.formatVersion == StateFileFormat.currentVersion)
        #expect(stored.ledger.lineage == "old-lineage")
        #expect(stored.ledger.serial > 7)
    }
}
