import FCMCore
import FCMViews
import Foundation
import Testing

/// Networks lose replies after the change is made: the retry then meets "already exists" (a group) or 409
/// (a subscription), which must count as done, so the apply succeeds and the next plan is clean. The commands run
/// on a manual clock: the retries of the lost replies back off without waiting.
@Suite struct LostReplyTests {
    @Test(arguments: [11, 12, 13])
    func repliesDroppedAfterCommitStillConverge(seed: Int) async throws {
        let emulator = try await InProcessEmulator(arguments: ["--drop-after-commit-rate", "0.3", "--seed", String(seed)])
        let workspace = try Workspace()
        var manifest = "project: {id: p, senderId: \"42\"}\ngroups:\n"
        for group in 0..<6 { manifest += "  g\(group):\n    members: [\"\(token(group * 10 + 1))\", \"\(token(group * 10 + 2))\"]\n" }
        manifest += "topics:\n"
        for topic in 0..<3 { manifest += "  t\(topic): [" + (1...20).map { "\"\(token($0))\"" }.joined(separator: ", ") + "]\n" }
        try workspace.write(manifest)
        // One request at a time: the seeded faults then meet the requests in the same order on every run, so the
        // outcome is the same every time (with requests in flight, arrival order decides which one is dropped).
        let common = ["-f", workspace.manifestPath, "--state", workspace.statePath, "--parallelism", "1"]
        let apply = await CLI.run(["apply", "--auto-approve"] + common, emulator: emulator, clock: ManualClock(wallStart: Date()))
        #expect(apply.code == 0, "\(apply.stdout)\(apply.stderr)")
        let dropped = try await emulator.requestLog().filter { $0["status"] as? Int == 0 }.count
        #expect(dropped > 0, "the fault never fired")
        let plan = await CLI.run(["plan", "--detailed-exitcode"] + common, emulator: emulator, clock: ManualClock(wallStart: Date()))
        #expect(plan.code == 0, "\(plan.stdout)\(plan.stderr)")
        for group in 0..<6 {
            #expect(try await emulator.groupMembers(sender: "42", name: "g\(group)")?.count == 2)
        }
    }

    /// Every reply lost: FCM made each change and no answer said so. The apply fails (exit 3) but keeps each
    /// change pending, so the next run reads FCM, records what exists, and can remove it: emptying the
    /// manifest leaves no orphan in FCM.
    @Test func changesWhoseEveryReplyIsLostArePendingNotForgotten() async throws {
        let emulator = try await InProcessEmulator(arguments: ["--drop-after-commit-rate", "1"])
        let workspace = try Workspace()
        let members = (1...20).map { token($0, prefix: "lost") }
        try workspace.write(
            "project: {id: p, senderId: \"42\"}\ngroups:\n  family:\n    members: [\"\(members[0])\", \"\(members[1])\"]\n"
                + "topics:\n  news: [" + members.map { "\"\($0)\"" }.joined(separator: ", ") + "]\n")
        let common = ["-f", workspace.manifestPath, "--state", workspace.statePath]
        let apply = await CLI.run(["apply", "--auto-approve"] + common, emulator: emulator, clock: ManualClock(wallStart: Date()))
        #expect(apply.code == 3, "\(apply.stdout)\(apply.stderr)")
        #expect(apply.stdout.contains("22 of the failed may have happened"), "\(apply.stdout)")
        for registration in members { #expect(try await emulator.topics(of: registration) == ["news"], "FCM made the change") }
        #expect(try await emulator.groupMembers(sender: "42", name: "family")?.count == 2)
        let state = try String(contentsOfFile: workspace.statePath, encoding: .utf8)
        #expect(state.contains("pending"), "the unsettled changes are in the state")

        var (_, faults) = try await emulator.admin("GET", "/emulator/v1/faults")
        faults["drop_after_commit"] = [Any]()
        let body = String(decoding: try JSONSerialization.data(withJSONObject: faults), as: UTF8.self)
        #expect(try await emulator.admin("PUT", "/emulator/v1/faults", json: body).0 == 200)

        try workspace.write("project: {id: p, senderId: \"42\"}\n")
        let emptied = await CLI.run(["apply", "--auto-approve", "--allow-empty"] + common, emulator: emulator, clock: ManualClock(wallStart: Date()))
        #expect(emptied.code == 0, "\(emptied.stdout)\(emptied.stderr)")
        for registration in members { #expect(try await emulator.topics(of: registration) == [], "no orphan subscription") }
        #expect(try await emulator.groupMembers(sender: "42", name: "family") == nil, "no orphan group")
    }
}
