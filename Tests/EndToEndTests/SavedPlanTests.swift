import FCMCore
import FCMEngine
import FCMTestSupport
import FCMViews
import Foundation
import Testing

/// What was reviewed is what runs: `plan -out`, `show`, `apply FILE` and exit 5, on the real client and
/// emulator (and the built binary for the exit codes).
@Suite struct SavedPlanTests {
    func manifest(news: [Int], group: [Int]) -> String {
        "project: {id: p, senderId: \"42\"}\ngroups:\n  fam:\n    members: [\(group.map { "\"\(token($0))\"" }.joined(separator: ", "))]\n"
            + "topics:\n  news: [\(news.map { "\"\(token($0))\"" }.joined(separator: ", "))]\n"
    }

    func mutations(_ emulator: any EmulatorHandle, after count: Int) async throws -> [String] {
        try await emulator.requestLog().dropFirst(count).filter { $0["method"] as? String != "GET" }.compactMap { $0["endpoint"] as? String }.sorted()
    }

    @Test func applyingASavedPlanSendsExactlyItsOperations() async throws {
        let emulator = try await InProcessEmulator()
        let workspace = try Workspace()
        let common = ["-f", workspace.manifestPath, "--state", workspace.statePath]
        try workspace.write(manifest(news: [1, 2], group: [3]))
        #expect(await CLI.run(["apply", "--auto-approve"] + common, emulator: emulator).code == 0)

        try workspace.write(manifest(news: [2, 4], group: [3, 5]))
        let planFile = workspace.url.appendingPathComponent("reviewed.plan").path
        let plan = await CLI.run(["plan", "-out", planFile] + common, emulator: emulator)
        #expect(plan.code == 0, "\(plan.stderr)")
        #expect(plan.stdout.contains("Saved this plan to \(planFile)"))
        let mode = try FileManager.default.attributesOfItem(atPath: planFile)[.posixPermissions] as? NSNumber
        #expect(mode?.intValue == 0o600)
        let shown = await CLI.run(["show", planFile], emulator: nil)
        #expect(shown.stdout.contains("Plan: 0 groups to create, 0 to delete; 1 member to add, 0 to remove; 1 subscription to add, 1 to remove."))
        #expect(shown.stdout.contains("state: \(workspace.statePath), serial 2"))
        let digestLine = try #require(plan.stdout.split(separator: "\n").first { $0.hasPrefix("Plan digest: sha256:") })
        #expect(shown.stdout.contains("  digest: \(digestLine.dropFirst("Plan digest: ".count))"), "\(shown.stdout)")
        #expect(!shown.stdout.contains(token(4)))
        #expect(await CLI.run(["show", planFile, "--show-tokens"], emulator: nil).stdout.contains(token(4)))

        let before = try await emulator.requestLog().count
        let applied = await CLI.run(["apply", planFile, "--auto-approve"], emulator: emulator)
        #expect(applied.code == 0, "\(applied.stderr)")
        #expect(try await mutations(emulator, after: before) == ["groups.mutate", "topics.create", "topics.delete"])
        #expect(try await emulator.topics(of: token(4)) == ["news"])
        #expect(try await emulator.topics(of: token(1)) == [])
        #expect(await CLI.run(["plan", "--detailed-exitcode"] + common, emulator: emulator).code == 0)
    }

    @Test func aStalePlanExitsFiveNamingWhatChangedAndSendsNothing() async throws {
        let emulator = try await InProcessEmulator()
        let workspace = try Workspace()
        let env = ["FCM_EMULATOR_HOST": emulator.host]
        let common = ["-f", workspace.manifestPath, "--state", workspace.statePath]
        try workspace.write(manifest(news: [1], group: [3]))
        #expect(try await CLI.runBinary(["apply", "--auto-approve"] + common, environment: env).code == 0)
        try workspace.write(manifest(news: [2], group: [3, 5]))
        let planFile = workspace.url.appendingPathComponent("pr.plan").path
        #expect(try await CLI.runBinary(["plan", "-out", planFile] + common, environment: env).code == 0)

        // Someone unsubscribes token 1 from news by hand: the plan's removal of it no longer holds. (What a removal
        // depends on is re-read; a plain new subscription is not: see the next test.)
        let encoded = token(1).replacingOccurrences(of: ":", with: "%3A")
        #expect(try await emulator.admin("DELETE", "/v1/projects/p/registrations/\(encoded)/topicSubscriptions/news?allowMissing=true").0 == 200)
        var before = try await emulator.requestLog().count
        let stale = try await CLI.runBinary(["apply", planFile, "--auto-approve"], environment: env)
        #expect(stale.code == 5, "\(stale.stderr)")
        #expect(stale.stderr.contains("the saved plan is stale: topic/news changed in FCM"), "\(stale.stderr)")
        #expect(try await mutations(emulator, after: before).isEmpty)

        // Another apply in between: the state moved.
        #expect(try await emulator.admin("POST", "/v1/projects/p/registrations/\(encoded)/topicSubscriptions?topicName=news", json: "{}").0 == 200)
        let second = workspace.url.appendingPathComponent("second.plan").path
        #expect(try await CLI.runBinary(["plan", "-out", second] + common, environment: env).code == 0)
        #expect(try await CLI.runBinary(["apply", "--auto-approve"] + common, environment: env).code == 0)
        before = try await emulator.requestLog().count
        let moved = try await CLI.runBinary(["apply", second, "--auto-approve"], environment: env)
        #expect(moved.code == 5, "\(moved.stderr)")
        #expect(moved.stderr.contains("the state moved from serial 2 to serial 4"), "\(moved.stderr)")
        #expect(try await mutations(emulator, after: before).isEmpty)

        // The manifest changed since the plan.
        try workspace.write(manifest(news: [1], group: [3]))
        let third = workspace.url.appendingPathComponent("third.plan").path
        #expect(try await CLI.runBinary(["plan", "-out", third] + common, environment: env).code == 0)
        try workspace.write(manifest(news: [1, 6], group: [3]))
        let edited = try await CLI.runBinary(["apply", third, "--auto-approve"], environment: env)
        #expect(edited.code == 5 && edited.stderr.contains("the manifest \(workspace.manifestPath) changed"), "\(edited.stderr)")
    }

    /// An app subscribes a registration itself between review and merge. The apply does not re-read it (the
    /// reviewed plan only subscribes it, in an additive topic, and the state records nothing of it there): FCM's 409
    /// to the create says the same, and the subscription is held without being recorded as fcmctl's.
    @Test func aSubscriptionSomeoneElseMadeSinceThePlanIsHeldAndNotRecorded() async throws {
        let emulator = try await InProcessEmulator()
        let workspace = try Workspace()
        let common = ["-f", workspace.manifestPath, "--state", workspace.statePath]
        try workspace.write(manifest(news: [1], group: [3]))
        #expect(await CLI.run(["apply", "--auto-approve"] + common, emulator: emulator).code == 0)
        try workspace.write(manifest(news: [1, 2, 4], group: [3]))
        let planFile = workspace.url.appendingPathComponent("pr.plan").path
        #expect(await CLI.run(["plan", "-out", planFile] + common, emulator: emulator).code == 0)

        let encoded = token(4).replacingOccurrences(of: ":", with: "%3A")
        #expect(try await emulator.admin("POST", "/v1/projects/p/registrations/\(encoded)/topicSubscriptions?topicName=news", json: "{}").0 == 200)
        let before = try await emulator.requestLog().count
        let applied = await CLI.run(["apply", planFile, "--auto-approve"], emulator: emulator)
        #expect(applied.code == 0, "\(applied.stderr)")
        #expect(
            applied.stdout.contains("Apply complete: 1 operation done in 1 request, 0 skipped (registration gone), 1 already subscribed"),
            "\(applied.stdout)")
        #expect(applied.stderr.contains("topic/news: \(String(token(4).prefix(6)))…"), "\(applied.stderr)")
        #expect(applied.stderr.contains("was already subscribed (not fcmctl's; not recorded"), "\(applied.stderr)")
        let log = try await emulator.requestLog().dropFirst(before)
        // One of the two is re-read (it answers for the credentials and the project), the other is not.
        #expect(log.filter { $0["endpoint"] as? String == "topics.list" }.count == 1)
        #expect(log.filter { $0["endpoint"] as? String == "topics.create" }.count == 2)
        #expect(try await emulator.topics(of: token(2)) == ["news"])

        // Not fcmctl's: leaving the manifest removes fcmctl's own subscription of token 2, never the app's of token 4.
        try workspace.write(manifest(news: [1], group: [3]))
        #expect(await CLI.run(["apply", "--auto-approve"] + common, emulator: emulator).code == 0)
        #expect(try await emulator.topics(of: token(4)) == ["news"])
        #expect(try await emulator.topics(of: token(2)) == [])
    }

    @Test func plansOfAnotherLineageOrANewerFormatAreRefused() async throws {
        let emulator = try await InProcessEmulator()
        let workspace = try Workspace()
        let common = ["-f", workspace.manifestPath, "--state", workspace.statePath]
        try workspace.write(manifest(news: [1], group: [3]))
        let planFile = workspace.url.appendingPathComponent("a.plan").path
        #expect(await CLI.run(["plan", "-out", planFile] + common, emulator: emulator).code == 0)
        // A different state (another lineage) is there by the time the plan is applied.
        let other = workspace.url.appendingPathComponent("other/state.json").path
        #expect(await CLI.run(["apply", "--auto-approve", "-f", workspace.manifestPath, "--state", other], emulator: emulator).code == 0)
        let wrong = await CLI.run(["apply", planFile, "--auto-approve", "--state", other], emulator: emulator)
        #expect(wrong.code == 1 && wrong.stderr.contains("belongs to another state"), "\(wrong.stderr)")

        var text = try String(contentsOfFile: planFile, encoding: .utf8)
        #expect(text.contains("\"formatVersion\":\(SavedPlan.currentFormatVersion)"))
        text = text.replacingOccurrences(of: "\"formatVersion\":\(SavedPlan.currentFormatVersion)", with: "\"formatVersion\":99")
        try text.write(toFile: planFile, atomically: true, encoding: .utf8)
        let newer = await CLI.run(["apply", planFile, "--auto-approve"], emulator: emulator)
        #expect(newer.code == 1 && newer.stderr.contains("plan format version 99 is newer"), "\(newer.stderr)")
    }

    @Test func maxRemovalsRefusesBeforeSendingAndASavedPlanKeepsItsLimit() async throws {
        let emulator = try await InProcessEmulator()
        let workspace = try Workspace()
        let common = ["-f", workspace.manifestPath, "--state", workspace.statePath]
        try workspace.write(manifest(news: Array(1...6), group: [3]))
        #expect(await CLI.run(["apply", "--auto-approve"] + common, emulator: emulator).code == 0)
        try workspace.write(manifest(news: [1], group: [3]))
        let before = try await emulator.requestLog().count
        let refused = await CLI.run(["apply", "--auto-approve", "--max-removals", "3"] + common, emulator: emulator)
        #expect(refused.code == 1)
        #expect(
            refused.stderr.contains("the plan removes 5 subscriptions and group members, more than --max-removals 3: topic/news (−5)"),
            "\(refused.stderr)")
        #expect(try await mutations(emulator, after: before).isEmpty)
        // A saved plan made under a limit it breaks is refused at plan time; one within it records the limit.
        let planFile = workspace.url.appendingPathComponent("r.plan").path
        #expect(await CLI.run(["plan", "-out", planFile, "--max-removals", "2"] + common, emulator: emulator).code == 1)
        #expect(await CLI.run(["plan", "-out", planFile, "--max-removals", "5"] + common, emulator: emulator).code == 0)
        #expect(await CLI.run(["show", planFile], emulator: nil).stdout.contains("--max-removals 5"))
        #expect(await CLI.run(["apply", planFile, "--auto-approve"], emulator: emulator).code == 0)
    }
}

/// Apply order and gone members, in-process against the fakes.
@Suite struct ApplyOrderTests {
    @Test func aRenamedTopicNeverLeavesADeviceWithNeitherWhenAdditionsFail() async throws {
        let fake = FakeWorld()
        let workspace = try Workspace()
        let members = (1...10).map { token($0) }
        let common = ["-f", workspace.manifestPath, "--state", "/fake/rename.json"]
        try workspace.write("project: {id: p, senderId: \"42\"}\ntopics:\n  old: [\(members.map { "\"\($0)\"" }.joined(separator: ", "))]\n")
        #expect(await fake.run(["apply", "--auto-approve"] + common).code == 0)
        try workspace.write("project: {id: p, senderId: \"42\"}\ntopics:\n  new: [\(members.map { "\"\($0)\"" }.joined(separator: ", "))]\n")
        let failing = Set([3, 7].map { Registration(value: token($0), kind: .token) })
        fake.fcm.failSubscribes(to: "new", of: failing, with: FCMServiceError(status: 500, code: "INTERNAL", message: "injected"))
        let partial = await fake.run(["apply", "--auto-approve"] + common)
        #expect(partial.code == 3, "\(partial.stderr)")
        #expect(partial.stderr.contains("not attempted: kept because a new subscription of the same registration failed"))
        for member in members {
            let topics = fake.fcm.topics(of: Registration(value: member, kind: .token))
            #expect(!topics.isEmpty, "\(member) ended with neither topic")
        }
        fake.fcm.clearFailures()
        #expect(await fake.run(["apply", "--auto-approve"] + common).code == 0)
        for member in members { #expect(fake.fcm.topics(of: Registration(value: member, kind: .token)) == ["new"]) }
    }

    /// FCM drops an invalid member silently, so only the member export probe lets fcmctl see it (wire reference §3).
    /// FCM lists no group's members and drops an unknown registration from an add without a word, so a new
    /// member is read before it is added: one FCM does not know (uninstalled before fcmctl ever saw it, or a
    /// token cut short) refuses the plan, and the group keeps the members it has.
    @Test func aNewGroupMemberFCMDoesNotKnowRefusesThePlan() async throws {
        let emulator = try await InProcessEmulator(arguments: ["--group-export"])
        let workspace = try Workspace()
        let gone = token(8, prefix: "gone")
        let common = [
            "-f", workspace.manifestPath, "--state", workspace.statePath, "--group-export-url", "\(emulator.baseURL)/fcm/notification/export",
        ]
        try workspace.write("project: {id: p, senderId: \"42\"}\ngroups:\n  fam:\n    members: [\"\(token(1))\"]\n")
        #expect(await CLI.run(["apply", "--auto-approve"] + common, emulator: emulator).code == 0)
        _ = try await emulator.admin("POST", "/emulator/v1/registrations", json: "{\"registrations\":[{\"token\":\"\(gone)\"}]}")
        #expect(try await emulator.admin("DELETE", "/emulator/v1/registrations/\(gone)").0 == 200)
        try workspace.write("project: {id: p, senderId: \"42\"}\ngroups:\n  fam:\n    members: [\"\(token(1))\", \"\(token(2))\", \"\(gone)\"]\n")
        for _ in 0..<2 {
            let apply = await CLI.run(["apply", "--auto-approve"] + common, emulator: emulator)
            #expect(apply.code == 1, "\(apply.stderr)")
            #expect(apply.stdout.hasPrefix("Refused: this plan will not be applied"), "\(apply.stdout)")
            #expect(apply.stderr.contains("error: registration gone8:…") && apply.stderr.contains("is unknown to FCM"), "\(apply.stderr)")
        }
        #expect(try await emulator.groupMembers(sender: "42", name: "fam") == [token(1)])
        // Without it, the rest is added.
        try workspace.write("project: {id: p, senderId: \"42\"}\ngroups:\n  fam:\n    members: [\"\(token(1))\", \"\(token(2))\"]\n")
        #expect(await CLI.run(["apply", "--auto-approve"] + common, emulator: emulator).code == 0)
        #expect(try await emulator.groupMembers(sender: "42", name: "fam")?.sorted() == [token(1), token(2)].sorted())
    }
}
