import FCMCore
import FCMViews
import Foundation
import Testing

/// No output of any error path carries a full registration or the access token, in any format, unless
/// `--show-tokens`. The commands run in-process, where everything they print goes through the captured console,
/// on a manual clock: the retries of the failing requests back off without waiting.
@Suite struct RedactionTests {
    static let accessToken = "ya29.pipeline-secret-access-token-0123456789"

    @Test func errorPathsNeverPrintRegistrationsOrTheAccessToken() async throws {
        // About redaction, not IAM: the token's principal (the emulator's account) may act on project p.
        let emulator = try await InProcessEmulator(arguments: [
            "--accept-token", Self.accessToken, "--iam-default", "any-project", "--fail-registration", "\(token(3))=500",
        ])
        let workspace = try Workspace()
        let registrations = (1...4).map { token($0) } + ["cR1rjyj4_KcAPA91bGusQ2"]
        let paths = ["-f", workspace.manifestPath, "--state", workspace.statePath]
        let common = paths + ["--verbose"]
        let env = ["FCM_ENDPOINT": emulator.baseURL, "FCM_ACCESS_TOKEN": Self.accessToken]
        var outputs: [String] = []
        func run(_ arguments: [String], _ environment: [String: String] = env) async throws {
            let result = await CLI.run(arguments, emulator: nil, clock: ManualClock(wallStart: Date()), environment: environment)
            outputs.append("$ \(arguments.joined(separator: " "))\n\(result.stdout)\(result.stderr)")
        }

        // Manifest errors on registration lines, in every format.
        try workspace.write(
            "project: {id: p, senderId: \"42\"}\ngroups:\n  fam:\n    members: [\"\(token(1))\", \"\(token(1))\"]\n"
                + "topics:\n  news: [\"\(token(2))\"]\n  bad: [\"cR1rjyj4_KcAPA91bGusQ2\", \"\(token(4))\"]\n  news: []\n")
        for format in ["text", "json", "github"] { try await run(["validate", "-f", workspace.manifestPath, "--format", format]) }
        try await run(["plan"] + common)

        // HTTP errors (a registration that answers 500), transport errors (nothing listening), injected 400s.
        try workspace.write(
            "project: {id: p, senderId: \"42\"}\ngroups:\n  fam:\n    members: [\"\(token(1))\"]\n"
                + "topics:\n  news: [\(registrations.map { "\"\($0)\"" }.joined(separator: ", "))]\n")
        try await run(["plan"] + common)
        try await run(["apply", "--dry-run"] + common)
        try await run(["apply", "--auto-approve"] + common)
        try await run(["plan"] + common, ["FCM_ENDPOINT": "http://127.0.0.1:9", "FCM_ACCESS_TOKEN": Self.accessToken])
        #expect(
            try await emulator.admin(
                "PUT", "/emulator/v1/faults", json: #"{"error_rates": [{"endpoint": "topics.delete", "status": 400, "rate": 1}]}"#
            ).0 == 200)
        try workspace.write("project: {id: p, senderId: \"42\"}\ntopics:\n  news: []\n")
        try await run(["apply", "--auto-approve", "--allow-empty"] + common)
        // The state commands take no --verbose: with it they would print only a usage error.
        try await run(["state", "list", "topic/news"] + paths)
        try await run(["state", "show", "topic/news"] + paths)

        let everything = outputs.joined(separator: "\n")
        #expect(everything.contains("could not reach"), "the transport error path did not run")
        #expect(everything.contains("INVALID_ARGUMENT"), "the HTTP error path did not run")
        #expect(everything.contains("error: could not read the subscriptions of"), "the unreadable path did not run")
        for registration in registrations {
            #expect(!everything.contains(registration), "\(registration) appears in:\n\(everything)")
            let encoded = registration.replacingOccurrences(of: ":", with: "%3A")
            #expect(!everything.contains(encoded), "\(encoded) appears")
        }
        #expect(!everything.contains(Self.accessToken))
        #expect(!everything.contains("pipeline-secret"))

        // And with --show-tokens the same registrations are shown, so the check above can fail.
        let shown = try await CLI.runBinary(["state", "list", "topic/news", "--show-tokens"] + paths, environment: env)
        #expect(shown.code == 0 && shown.stdout.contains(token(1)), "\(shown.code) \(shown.stdout)\(shown.stderr)")
        let dry = try await CLI.runBinary(["apply", "--dry-run", "--show-tokens", "--allow-empty"] + common, environment: env)
        #expect(dry.stdout.contains(token(1)) || dry.stdout.contains(token(2)), "\(dry.stdout)")
    }
}
