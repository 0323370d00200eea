import FCMEngine
import FCMViews
import Foundation
import Testing

/// The exit-code contract, checked on the built binary as CI scripts would see it.
@Suite struct ExitCodeTests {
    static let quickstart = PlanApplyTests.quickstart

    @Test func detailedExitcodeIsTwoThenZero() async throws {
        let emulator = try await InProcessEmulator()
        let workspace = try Workspace()
        let env = ["FCM_EMULATOR_HOST": emulator.host]
        let common = ["-f", Self.quickstart, "--state", workspace.statePath]
        #expect(try await CLI.runBinary(["plan", "--detailed-exitcode"] + common, environment: env).code == 2)
        #expect(try await CLI.runBinary(["plan"] + common, environment: env).code == 0)
        #expect(try await CLI.runBinary(["apply", "--auto-approve"] + common, environment: env).code == 0)
        let clean = try await CLI.runBinary(["plan", "--detailed-exitcode"] + common, environment: env)
        #expect(clean.code == 0)
        #expect(clean.stdout.contains("No changes"))
    }

    /// Each bad manifest is refused with `path:line:col: error:` and exit 1 before any request is sent.
    @Test(arguments: [
        (
            "project: {id: p, senderId: \"42\"}\ngroups:\n  big:\n    members: [" + (1...21).map { "\"\(token($0))\"" }.joined(separator: ", ")
                + "]\n",
            ":4:14: error: group/big has 21 members; FCM allows at most 20"
        ),
        ("project: {id: p, senderId: \"42\"}\ntopicz:\n  news: []\n", ":2:1: error: unknown key 'topicz' in the top level; did you mean 'topics'?"),
        ("project: {id: p, senderId: \"42\"\ntopics: {}\n", ":2:1: error: YAML syntax: did not find expected ',' or '}'"),
    ])
    func invalidManifestExitsOneBeforeAnyRequest(manifest: String, expected: String) async throws {
        let emulator = try await InProcessEmulator()
        let workspace = try Workspace()
        try workspace.write(manifest)
        let state = ["--state", workspace.statePath]
        for command in [["validate"], ["plan"] + state, ["apply", "--auto-approve"] + state] {
            let result = try await CLI.runBinary(
                command + ["-f", workspace.manifestPath],
                environment: ["FCM_EMULATOR_HOST": emulator.host])
            #expect(result.code == 1, "\(command): \(result.stderr)")
            #expect(result.stderr.contains(workspace.manifestPath + expected), "\(result.stderr)")
            #expect(result.stderr.contains("^"), "the offending line is quoted with a caret")
        }
        #expect(try await emulator.requestLog().isEmpty)
    }

    @Test func usageErrorIsSixtyFour() async throws {
        let result = try await CLI.runBinary(["plan", "--no-such-flag"])
        #expect(result.code == 64)
        #expect(result.stderr.contains("Unknown option '--no-such-flag'"))
    }

    @Test func withoutEmulatorHostCredentialsAreRefusedClearly() async throws {
        let result = try await CLI.runBinary(["plan", "-f", Self.quickstart, "--state", "/nonexistent/state.json"])
        #expect(result.code == 1)
        #expect(
            result.stderr.contains(
                "error: no credentials found. Tried, in order: FCM_EMULATOR_HOST, FCM_ACCESS_TOKEN, GOOGLE_APPLICATION_CREDENTIALS"))
        #expect(result.stderr.contains("FCM_EMULATOR_HOST=127.0.0.1:PORT for fcm-emulator"))
    }

    @Test func emptyManifestIsRefusedUnlessAllowed() async throws {
        let workspace = try Workspace()
        try workspace.write("project: {id: p, senderId: \"42\"}\n")
        let result = try await CLI.runBinary(["plan", "-f", workspace.manifestPath], environment: ["FCM_EMULATOR_HOST": "127.0.0.1:9"])
        #expect(result.code == 1)
        #expect(result.stderr.contains("--allow-empty"))
    }
}

/// The exit-code contract as `--help` states it, read from the built binary.
@Suite struct HelpExitCodeTests {
    @Test func helpStatesExitCodesFourAndFiveAsReal() async throws {
        let help = try await CLI.runBinary(["--help"])
        #expect(help.code == 0)
        let text = help.stdout.replacingOccurrences(of: "\n", with: " ").split(separator: " ").joined(separator: " ")
        #expect(text.contains("4 the state is locked by another run"), "\(help.stdout)")
        #expect(!text.contains("4 (state locked)"))
        #expect(text.contains("5 a saved plan is stale"), "\(help.stdout)")
        #expect(!text.contains("reserved"))
        let state = try await CLI.runBinary(["state", "--help"])
        for command in ["list", "show", "rm", "pull", "push", "unlock"] { #expect(state.stdout.contains("  \(command) "), "\(state.stdout)") }
    }
}
