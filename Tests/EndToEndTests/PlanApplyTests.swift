import FCMViews
import Foundation
import Testing

/// plan → apply → plan through the real commands, the real libcurl client and a real emulator process.
@Suite struct PlanApplyTests {
    static let quickstart = BuildProducts.packageRoot.appendingPathComponent("examples/quickstart").path

    @Test func quickstartConvergesAndSecondPlanIsClean() async throws {
        let emulator = try await InProcessEmulator()
        let workspace = try Workspace()
        let common = ["-f", Self.quickstart, "--state", workspace.statePath]

        let first = await CLI.run(["plan", "--detailed-exitcode"] + common, emulator: emulator)
        #expect(first.code == 2, "\(first.stderr)")
        #expect(first.stdout.contains("Plan: 1 group to create, 0 to delete; 2 members to add, 0 to remove; 3 subscriptions to add, 0 to remove."))
        #expect(first.stdout.contains("+ group/appUser-Chris  create with 2 members"))

        let apply = await CLI.run(["apply", "--auto-approve"] + common, emulator: emulator)
        #expect(apply.code == 0, "\(apply.stderr)")

        let members = try await emulator.groupMembers(sender: "123456789012", name: "appUser-Chris")
        #expect(members?.sorted() == ["cR1rjyj4_KcAPA91bGusQ2", "fGw0qy4TGgk:APA91bHun4MxP5egoKMwt2KZFBaFUH-1RYqx"])
        #expect(try await emulator.topics(of: "kiosk-nyc-001:APA91bE8xKq2Rv0sWmYd3TfLpNcJh7Ug") == ["industry-tech", "weather-nyc"])
        #expect(try await emulator.topics(of: "fGw0qy4TGgk:APA91bHun4MxP5egoKMwt2KZFBaFUH-1RYqx") == ["weather-nyc"])

        let second = await CLI.run(["plan", "--detailed-exitcode"] + common, emulator: emulator)
        #expect(second.code == 0, "\(second.stdout)\(second.stderr)")
        #expect(second.stdout.contains("No changes"))

        // Re-applying sends no mutating request at all.
        let before = try await emulator.requestLog().count
        let again = await CLI.run(["apply", "--auto-approve"] + common, emulator: emulator)
        #expect(again.code == 0)
        let mutations = try await emulator.requestLog().dropFirst(before).filter { $0["method"] as? String != "GET" }
        #expect(mutations.isEmpty)

        let attributes = try FileManager.default.attributesOfItem(atPath: workspace.statePath)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
    }

    @Test func dryRunListsRequestsAndChangesNothing() async throws {
        let emulator = try await InProcessEmulator()
        let workspace = try Workspace()
        let before = try await emulator.stateDump()
        let dry = await CLI.run(["apply", "--dry-run", "-f", Self.quickstart, "--state", workspace.statePath], emulator: emulator)
        #expect(dry.code == 0, "\(dry.stderr)")
        #expect(try await emulator.stateDump() == before)
        #expect(!FileManager.default.fileExists(atPath: workspace.statePath))
        let requests = dry.stdout.split(separator: "\n").filter { $0.hasPrefix("  POST ") || $0.hasPrefix("  DELETE ") }
        #expect(requests.count == 4)
        #expect(
            dry.stdout.contains("POST http://\(emulator.host)/fcm/notification {\"notification_key_name\":\"appUser-Chris\",\"operation\":\"create\"")
        )
        #expect(dry.stdout.contains("/v1/projects/quickstart-demo/registrations/kiosk-…h7Ug/topicSubscriptions?topicName=industry-tech {}"))
        // Registrations are redacted unless asked for.
        #expect(!dry.stdout.contains("kiosk-nyc-001:APA91bE8xKq2Rv0sWmYd3TfLpNcJh7Ug"))
        let mutations = try await emulator.requestLog().filter { $0["method"] as? String != "GET" }
        #expect(mutations.isEmpty)
    }

    @Test func replacingEveryMemberOfAFullGroupKeepsItAlive() async throws {
        let emulator = try await InProcessEmulator()
        let workspace = try Workspace()
        func manifest(_ members: [String]) -> String {
            "project: {id: p, senderId: \"42\"}\ngroups:\n  family:\n    members:\n" + members.map { "      - \"\($0)\"\n" }.joined()
        }
        let old = (1...20).map { token($0, prefix: "old") }
        let new = (1...20).map { token($0, prefix: "new") }
        try workspace.write(manifest(old))
        let common = ["-f", workspace.manifestPath, "--state", workspace.statePath]
        #expect(await CLI.run(["apply", "--auto-approve"] + common, emulator: emulator).code == 0)
        #expect(try await emulator.groupMembers(sender: "42", name: "family")?.count == 20)

        try workspace.write(manifest(new))
        let plan = await CLI.run(["plan"] + common, emulator: emulator)
        #expect(plan.stdout.contains("~ group/family  +20 −20 (0 unchanged)"))
        let apply = await CLI.run(["apply", "--auto-approve"] + common, emulator: emulator)
        #expect(apply.code == 0, "\(apply.stderr)")
        // The emulator refuses a 21st member and deletes an emptied group (after which add/remove fail with
        // "notification_key not found"), so success means the group stayed within 1...20 throughout.
        #expect(try await emulator.groupMembers(sender: "42", name: "family")?.sorted() == new.sorted())
        let creates = try await emulator.requestLog().filter { $0["path"] as? String == "/fcm/notification" && $0["method"] as? String == "POST" }
        #expect(creates.count == 1 + 4, "one create, then add/remove/add/remove")
        #expect(await CLI.run(["plan", "--detailed-exitcode"] + common, emulator: emulator).code == 0)
    }

    @Test func groupEmptiedByTheManifestIsDeletedAndShownAsDelete() async throws {
        let emulator = try await InProcessEmulator()
        let workspace = try Workspace()
        try workspace.write("project: {id: p, senderId: \"42\"}\ngroups:\n  team: [\"\(token(1))\", \"\(token(2))\"]\n  keep: [\"\(token(3))\"]\n")
        let common = ["-f", workspace.manifestPath, "--state", workspace.statePath]
        #expect(await CLI.run(["apply", "--auto-approve"] + common, emulator: emulator).code == 0)

        try workspace.write("project: {id: p, senderId: \"42\"}\ngroups:\n  keep: [\"\(token(3))\"]\n")
        let plan = await CLI.run(["plan", "--detailed-exitcode"] + common, emulator: emulator)
        #expect(plan.code == 2)
        #expect(plan.stdout.contains("- group/team  delete (remove its 2 members)"))
        #expect(plan.stdout.contains("Plan: 0 groups to create, 1 to delete; 0 members to add, 2 to remove;"))
        #expect(await CLI.run(["apply", "--auto-approve"] + common, emulator: emulator).code == 0)
        #expect(try await emulator.groupMembers(sender: "42", name: "team") == nil)
        #expect(try await emulator.groupMembers(sender: "42", name: "keep") == [token(3)])
        #expect(await CLI.run(["plan", "--detailed-exitcode"] + common, emulator: emulator).code == 0)
    }

    @Test func additiveTopicsRemoveOnlyWhatFcmctlCreated() async throws {
        let emulator = try await InProcessEmulator()
        let workspace = try Workspace()
        let appMade = token(9, prefix: "app")
        // The app subscribed itself to "news"; fcmctl must never remove that.
        let (status, _) = try await emulator.admin(
            "POST", "/v1/projects/p/registrations/\(appMade.replacingOccurrences(of: ":", with: "%3A"))/topicSubscriptions?topicName=news", json: "{}"
        )
        #expect(status == 200)
        try workspace.write("project: {id: p, senderId: \"42\"}\ntopics:\n  news: [\"\(token(1))\", \"\(appMade)\"]\n")
        let common = ["-f", workspace.manifestPath, "--state", workspace.statePath]
        let first = await CLI.run(["apply", "--auto-approve"] + common, emulator: emulator)
        #expect(first.stdout.contains("~ topic/news  +1 −0 (1 unchanged)"))

        try workspace.write("project: {id: p, senderId: \"42\"}\ntopics:\n  news: [\"\(token(2))\"]\n")
        let plan = await CLI.run(["plan", "--show-tokens"] + common, emulator: emulator)
        #expect(plan.stdout.contains("~ topic/news  +1 −1 (0 unchanged)"))
        #expect(plan.stdout.contains("− \(token(1))"))
        #expect(!plan.stdout.contains("− \(appMade)"))
        #expect(await CLI.run(["apply", "--auto-approve"] + common, emulator: emulator).code == 0)
        #expect(try await emulator.topics(of: token(1)) == [])
        #expect(try await emulator.topics(of: token(2)) == ["news"])
        #expect(try await emulator.topics(of: appMade) == ["news"])
    }

    @Test func uninstalledRegistrationIsDriftNotFailure() async throws {
        let emulator = try await InProcessEmulator()
        let workspace = try Workspace()
        let gone = token(5, prefix: "gone")
        _ = try await emulator.admin("POST", "/emulator/v1/registrations", json: "{\"registrations\":[{\"token\":\"\(gone)\"}]}")
        // Known first: fcmctl subscribed it while it worked. Then the app is uninstalled.
        try workspace.write("project: {id: p, senderId: \"42\"}\ntopics:\n  news: [\"\(gone)\"]\n")
        let common = ["-f", workspace.manifestPath, "--state", workspace.statePath]
        #expect(await CLI.run(["apply", "--auto-approve"] + common, emulator: emulator).code == 0)
        #expect(try await emulator.admin("DELETE", "/emulator/v1/registrations/\(gone)").0 == 200)
        try workspace.write("project: {id: p, senderId: \"42\"}\ntopics:\n  news: [\"\(token(1))\", \"\(gone)\"]\n")
        let apply = await CLI.run(["apply", "--auto-approve"] + common, emulator: emulator)
        #expect(apply.code == 0, "\(apply.stderr)")
        #expect(apply.stderr.contains("is no longer registered with FCM (UNREGISTERED)"))
        #expect(!apply.stdout.contains("warning:"))
        #expect(apply.stdout.contains("~ topic/news  +1 −0"))
        #expect(try await emulator.topics(of: token(1)) == ["news"])
    }
}
