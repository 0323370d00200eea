import FCMViews
import Foundation
import Testing

/// validate and fmt as CI pipelines use them, on the built binary.
@Suite struct ManifestCommandTests {
    static func example(_ name: String) -> String {
        BuildProducts.packageRoot.appendingPathComponent("examples/\(name)").path
    }

    func manyProblems(_ workspace: Workspace) throws {
        let topics = (1...12).map { "  \"bad topic \($0)\": [\"a\($0):APA91b\"]\n" }.joined()
        try workspace.write("project: {id: p, senderId: \"42\"}\nunknownKey: 1\ntopics:\n" + topics)
    }

    @Test func githubAnnotationsAreCappedAtTenWithACount() async throws {
        let workspace = try Workspace()
        try manyProblems(workspace)
        let result = try await CLI.runBinary(["validate", "--format", "github", "-f", workspace.manifestPath])
        #expect(result.code == 1)
        let lines = result.stdout.split(separator: "\n")
        #expect(lines.count == 11)
        let escapedPath = workspace.manifestPath.replacingOccurrences(of: ":", with: "%3A")
        #expect(
            lines.first
                == "::error file=\(escapedPath),line=2,col=1::unknown key 'unknownKey' in the top level; expected one of: apiVersion, include, project, state, defaults, devices, deviceFiles, groups, topics"
        )
        #expect(lines.prefix(10).allSatisfy { $0.hasPrefix("::error file=") })
        #expect(lines.last == "::notice::3 more problems not shown; run fcmctl validate locally for all of them")
    }

    @Test func jsonDiagnosticsAreVersionedAndComplete() async throws {
        let workspace = try Workspace()
        try manyProblems(workspace)
        let result = try await CLI.runBinary(["validate", "--format", "json", "-f", workspace.manifestPath])
        #expect(result.code == 1)
        let document = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        #expect(document["format_version"] as? String == "1")
        #expect(document["valid"] as? Bool == false)
        #expect(document["error_count"] as? Int == 13)
        let first = try #require((document["diagnostics"] as? [[String: Any]])?.first)
        #expect(first["file"] as? String == workspace.manifestPath)
        #expect(first["line"] as? Int == 2)
        #expect(first["column"] as? Int == 1)
        #expect(first["severity"] as? String == "error")
    }

    @Test func fmtCheckListsThenFmtFixesKeepingComments() async throws {
        let workspace = try Workspace()
        try workspace.write("# keep me\ntopics: {news: [b:APA91b, a:APA91b]}  # and me\nproject: {id: p, senderId: \"1\"}\n")
        let check = try await CLI.runBinary(["fmt", "--check", "-f", workspace.manifestPath])
        #expect(check.code == 1)
        #expect(check.stdout == workspace.manifestPath + "\n")
        #expect(try await CLI.runBinary(["fmt", "-f", workspace.manifestPath]).code == 0)
        let text = try String(contentsOfFile: workspace.manifestPath, encoding: .utf8)
        // The trailing comment stays with the last value written on its line.
        #expect(text == "# keep me\nproject:\n  id: p\n  senderId: \"1\"\ntopics:\n  news:\n    - a:APA91b  # and me\n    - b:APA91b\n")
        #expect(try await CLI.runBinary(["fmt", "--check", "-f", workspace.manifestPath]).code == 0)
    }

    @Test(arguments: ["quickstart", "kiosk-fleet", "per-user-groups", "legacy-iid"])
    func examplesValidateAndAreFormatted(name: String) async throws {
        #expect(try await CLI.runBinary(["validate", "-f", Self.example(name)]).code == 0)
        #expect(try await CLI.runBinary(["fmt", "--check", "-f", Self.example(name)]).code == 0)
    }

    @Test func kioskFleetSelectorsApplyAgainstTheEmulator() async throws {
        let emulator = try await InProcessEmulator()
        let workspace = try Workspace()
        let common = ["-f", Self.example("kiosk-fleet"), "--state", workspace.statePath]
        let plan = await CLI.run(["plan", "--detailed-exitcode"] + common, emulator: emulator)
        #expect(plan.code == 2, "\(plan.stderr)")
        #expect(plan.stdout.contains("Plan: 0 groups to create, 0 to delete; 0 members to add, 0 to remove; 11 subscriptions to add, 0 to remove."))
        #expect(plan.stdout.contains("~ topic/site-nyc  +2 −0 (0 unchanged)\n    + kiosk-nyc-001 (cN5kL9…NfG4)\n    + kiosk-nyc-002 (fR2tY6…OgH5)\n"))
        #expect(await CLI.run(["apply", "--auto-approve"] + common, emulator: emulator).code == 0)
        // kiosk-nyc-003 (a FID) is excluded from site-nyc but selected by model and by site for weather.
        #expect(try await emulator.topics(of: "dWq3Er5Ty7Ui9Op1As3Df5") == ["firmware-tab-a8", "weather"])
        #expect(try await emulator.topics(of: "cN5kL9mB2vX:APA91bH3kIm9uSrB5yAv1wTeZxDpO6cNfG4") == ["site-nyc", "weather"])
        #expect(await CLI.run(["plan", "--detailed-exitcode"] + common, emulator: emulator).code == 0)
    }

    @Test func legacyIIDProjectsSubscribeInBatchesAndRefreshThroughIIDInfo() async throws {
        let emulator = try await InProcessEmulator()
        let workspace = try Workspace()
        let common = ["-f", Self.example("legacy-iid"), "--state", workspace.statePath]
        let dry = await CLI.run(["apply", "--dry-run"] + common, emulator: emulator)
        #expect(
            dry.stdout.contains(
                "POST http://\(emulator.host)/iid/v1:batchAdd {\"registration_tokens\":[\"eD1tor…GhJk\",\"r3ader…NmQw\"],\"to\":\"/topics/breaking-news\"}"
            ), "\(dry.stdout)")
        #expect(await CLI.run(["apply", "--auto-approve"] + common, emulator: emulator).code == 0)
        #expect(try await emulator.topics(of: "r3ader0001x:APA91bA9s8D7f6G5h4J3k2L1z0XcVbNmQw") == ["breaking-news"])
        let endpoints = try await emulator.requestLog().compactMap { $0["endpoint"] as? String }
        #expect(endpoints.filter { $0 == "iid.batchAdd" }.count == 1, "both registrations in one batch")
        #expect(endpoints.contains("iid.info"))
        #expect(!endpoints.contains { $0.hasPrefix("topics.") }, "no v1 topic request for an iid project")
        #expect(await CLI.run(["plan", "--detailed-exitcode"] + common, emulator: emulator).code == 0)
    }
}

@Suite struct StatePathTests {
    @Test func manifestStatePathIsUsedRelativeToItsFileAndFlagOverridesIt() async throws {
        let emulator = try await InProcessEmulator()
        let workspace = try Workspace()
        try workspace.write("project: {id: p, senderId: \"42\"}\nstate: {backend: local, path: ledger/fleet.json}\ntopics:\n  news: [\"a:APA91b\"]\n")
        #expect(await CLI.run(["apply", "--auto-approve", "-f", workspace.manifestPath], emulator: emulator).code == 0)
        #expect(FileManager.default.fileExists(atPath: workspace.url.appendingPathComponent("ledger/fleet.json").path))
        let override = workspace.url.appendingPathComponent("elsewhere.json").path
        let plan = await CLI.run(["plan", "-f", workspace.manifestPath, "--state", override], emulator: emulator)
        #expect(plan.code == 0)
        #expect(!FileManager.default.fileExists(atPath: override), "plan never writes state")
    }
}
