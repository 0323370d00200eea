import FCMViews
import Foundation
import Testing

/// The built fcmctl on the event loop macOS uses (`FCMCTL_CURL_LOOP=poll`), against a real emulator: Linux
/// defaults to epoll, so without this the portable loop would carry a real run nowhere here.
@Suite struct PortableLoopTests {
    @Test func theBinaryConvergesOnThePortableLoop() async throws {
        let emulator = try await InProcessEmulator()
        let workspace = try Workspace()
        // Enough requests for many in flight at once, on connections kept alive from one to the next.
        let topics = (1...4).map { topic in "  topic-\(topic): [" + (1...50).map { "\"\(token($0))\"" }.joined(separator: ", ") + "]\n" }
        try workspace.write("project: {id: p, senderId: \"42\"}\ntopics:\n" + topics.joined())
        let environment = ["FCM_EMULATOR_HOST": emulator.host, "FCMCTL_CURL_LOOP": "poll"]
        let common = ["-f", workspace.manifestPath, "--state", workspace.statePath]

        let apply = try await CLI.runBinary(["apply", "--auto-approve", "--verbose", "--parallelism", "16"] + common, environment: environment)
        #expect(apply.code == 0, "\(apply.stderr)")
        #expect(apply.stderr.contains("HTTP: libcurl, poll loop."), "\(apply.stderr)")
        #expect(try await emulator.topics(of: token(1)) == ["topic-1", "topic-2", "topic-3", "topic-4"])
        #expect(try await emulator.topics(of: token(50)) == ["topic-1", "topic-2", "topic-3", "topic-4"])

        let plan = try await CLI.runBinary(["plan", "--detailed-exitcode"] + common, environment: environment)
        #expect(plan.code == 0, "\(plan.stdout)\(plan.stderr)")
        #expect(plan.stdout.contains("No changes"))
    }
}
