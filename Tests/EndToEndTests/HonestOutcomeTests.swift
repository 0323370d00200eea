import FCMCore
import FCMViews
import Foundation
import Testing

/// An apply says what happened: a refused request is a failure (exit 3), never "gone" or done; a
/// registration that is really gone is skipped with the suggestion, and the apply succeeds.
@Suite struct HonestOutcomeTests {
    @Test func everySubscribeRefusedWithAPlainBadRequestIsAFailure() async throws {
        let emulator = try await InProcessEmulator(arguments: ["--error-rate", "topics.create:400=1.0"])
        let workspace = try Workspace()
        try workspace.write("project: {id: p, senderId: \"42\"}\ntopics:\n  news: [\"\(token(1))\", \"\(token(2))\", \"\(token(3))\"]\n")
        let result = try await CLI.runBinary(
            ["apply", "--auto-approve", "-f", workspace.manifestPath, "--state", workspace.statePath],
            environment: ["FCM_EMULATOR_HOST": emulator.host])
        #expect(result.code == 3, "\(result.stdout)\(result.stderr)")
        #expect(
            result.stdout.contains("Apply finished with failures: 0 operations done in 0 requests, 0 skipped (registration gone), 3 failed."),
            "\(result.stdout)")
        let errors = result.stderr.split(separator: "\n").filter { $0.hasPrefix("error:") }
        #expect(
            errors == [
                "error: topic/news: subscribe dev1:A…xxx1: INVALID_ARGUMENT: Injected fault: INVALID_ARGUMENT",
                "error: topic/news: subscribe dev2:A…xxx2: INVALID_ARGUMENT: Injected fault: INVALID_ARGUMENT",
                "error: topic/news: subscribe dev3:A…xxx3: INVALID_ARGUMENT: Injected fault: INVALID_ARGUMENT",
            ], "\(result.stderr)")
        #expect(try await emulator.topics(of: token(1)) == [])
    }

    @Test func goneRegistrationsAreSkippedWithTheSuggestionAndTheApplySucceeds() async throws {
        let emulator = try await InProcessEmulator()
        let workspace = try Workspace()
        let gone = token(9, prefix: "gone")
        // Known first: fcmctl subscribed it to one topic while it worked; then it is declared in another too.
        try workspace.write("project: {id: p, senderId: \"42\"}\ntopics:\n  news: [\"\(token(1))\", \"\(gone)\"]\n")
        let common = ["-f", workspace.manifestPath, "--state", workspace.statePath]
        let env = ["FCM_EMULATOR_HOST": emulator.host]
        #expect(try await CLI.runBinary(["apply", "--auto-approve"] + common, environment: env).code == 0)
        try workspace.write("project: {id: p, senderId: \"42\"}\ntopics:\n  news: [\"\(token(1))\", \"\(gone)\"]\n  alerts: [\"\(gone)\"]\n")
        #expect(try await emulator.admin("DELETE", "/emulator/v1/registrations/\(gone)").0 == 200)
        let apply = try await CLI.runBinary(["apply", "--auto-approve"] + common, environment: env)
        #expect(apply.code == 0, "\(apply.stderr)")
        #expect(apply.stderr.contains("is no longer registered with FCM"), "\(apply.stderr)")
        #expect(!apply.stdout.contains("warning"))
        #expect(apply.stdout.contains("No changes planned, but FCM does not match the manifest"), "\(apply.stdout)")
    }

    /// A registration fcmctl never saw working and FCM does not know (a token cut short in an export) refuses the
    /// plan, in plan and in apply, with its place; nothing is sent, and a rotation's old token keeps its topics.
    @Test func aNewRegistrationFCMDoesNotKnowRefusesThePlanAndTheWorkingOneStays() async throws {
        let emulator = try await InProcessEmulator(arguments: ["--strict-registrations"])
        let workspace = try Workspace()
        let working = token(2, prefix: "k2")
        _ = try await emulator.admin("POST", "/emulator/v1/registrations", json: "{\"registrations\":[{\"token\":\"\(working)\"}]}")
        let manifest = { (registration: String) in
            "project: {id: p, senderId: \"42\"}\ndevices:\n  k2: {token: \"\(registration)\"}\ntopics:\n  news: [k2]\n  alerts: [k2]\n"
        }
        try workspace.write(manifest(working))
        let common = ["-f", workspace.manifestPath, "--state", workspace.statePath]
        #expect(await CLI.run(["apply", "--auto-approve"] + common, emulator: emulator).code == 0)
        try workspace.write(manifest(String(working.dropLast(3))))
        for command in [["plan"], ["plan", "--refresh=changed"], ["apply", "--auto-approve"]] {
            let run = await CLI.run(command + common, emulator: emulator)
            #expect(run.code == 1, "\(command): \(run.stderr)")
            #expect(run.stdout.hasPrefix("Refused: this plan will not be applied"), "\(run.stdout)")
            #expect(run.stdout.contains("the device's registration changed (rotation)"))
            #expect(run.stderr.contains("\(workspace.manifestPath):3:3: error: device k2's registration"), "\(run.stderr)")
            #expect(!run.stdout.contains("FCM matches the manifest"))
        }
        #expect(try await emulator.topics(of: working) == ["alerts", "news"])
    }
}

/// One registration FCM will not tell about does not sink the run. On a manual clock: its reads back off without
/// waiting.
@Suite struct UnreadableRegistrationTests {
    @Test func theRestIsPlannedAndAppliedAndTheRunEndsWithExitOne() async throws {
        let broken = token(7, prefix: "broken")
        let emulator = try await InProcessEmulator(arguments: ["--fail-registration", "\(broken)=500"])
        let workspace = try Workspace()
        // The authoritative topic makes apply read every registration first, as plan does (`UnreadCreates`).
        try workspace.write(
            "project: {id: p, senderId: \"42\"}\ntopics:\n  news: [\"\(token(1))\", \"\(token(2))\", \"\(broken)\"]\n"
                + "  all:\n    ownership: authoritative\n    members: [\"\(token(1))\"]\n")
        let common = ["-f", workspace.manifestPath, "--state", workspace.statePath]
        let plan = await CLI.run(["plan"] + common, emulator: emulator, clock: ManualClock(wallStart: Date()))
        #expect(plan.code == 1, "\(plan.stderr)")
        #expect(plan.stdout.contains("~ topic/news  +2 −0"), "\(plan.stdout)")
        #expect(plan.stderr.contains("error: could not read the subscriptions of broken…xxx7"), "\(plan.stderr)")
        #expect(!plan.stderr.contains(broken))
        let apply = await CLI.run(
            ["apply", "--auto-approve", "--skip-unreadable"] + common, emulator: emulator, clock: ManualClock(wallStart: Date()))
        #expect(apply.code == 0, "\(apply.stderr)")
        #expect(apply.stderr.contains("warning: 1 registration could not be read"), "\(apply.stderr)")
        #expect(try await emulator.topics(of: token(1)) == ["all", "news"])
        #expect(try await emulator.topics(of: token(2)) == ["news"])
        // Nothing left to change, but one registration still unread: no output may say that FCM matches.
        let again = await CLI.run(["plan"] + common, emulator: emulator, clock: ManualClock(wallStart: Date()))
        #expect(again.code == 1)
        #expect(again.stdout == "No changes planned, but FCM does not match the manifest: 1 registration could not be read.\n", "\(again.stdout)")
        let drift = await CLI.run(["drift"] + common, emulator: emulator, clock: ManualClock(wallStart: Date()))
        #expect(drift.stdout.hasPrefix("No drift in what was read, but 1 registration could not be read"), "\(drift.stdout)")
        #expect(!drift.stdout.contains("FCM matches"))
    }
}
