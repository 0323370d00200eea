import FCMCore
import FCMState
import FCMViews
import Foundation
import Testing

/// SIGTERM and SIGINT, as a CI runner sends them on cancel, against the built binary and a real emulator.
@Suite(.serialized) struct SignalTests {
    func subscriptionCount(_ emulator: any EmulatorHandle) async throws -> Int {
        try await emulator.admin("GET", "/emulator/v1/stats").1["subscriptions"] as? Int ?? -1
    }

    /// (topic, registration) pairs the emulator holds.
    func made(_ emulator: any EmulatorHandle) async throws -> Set<String> {
        let dump = try JSONSerialization.jsonObject(with: try await emulator.stateDump()) as? [String: Any] ?? [:]
        var pairs = Set<String>()
        for registration in dump["registrations"] as? [[String: Any]] ?? [] {
            for topic in registration["topics"] as? [String] ?? [] { pairs.insert("\(topic) \(registration["id"] as? String ?? "")") }
        }
        return pairs
    }

    /// (topic, registration) pairs the state records, and those it lists as pending.
    func recorded(_ common: [String]) async throws -> (recorded: Set<String>, pending: Set<String>) {
        let pulled = try await CLI.runBinary(["state", "pull"] + common)
        #expect(pulled.code == 0, "\(pulled.stderr)")
        let ledger = try StateFileFormat.decode(Array(pulled.stdout.utf8), source: "pull").ledger
        let recorded = Set(ledger.topics.flatMap { topic, members in members.map { "\(topic) \($0.value)" } })
        let pending = Set(ledger.pending.subscriptions.flatMap { topic, members in members.map { "\(topic) \($0.value)" } })
        return (recorded, pending)
    }

    @Test(arguments: [SIGTERM, SIGINT])
    func aSignalDuringApplyWritesTheStateReleasesTheLockAndExits(signal: Int32) async throws {
        let emulator = try EmulatorProcess()
        let workspace = try Workspace()
        // 2,000 changes at 50 a second: 40 s, far longer than the test needs to land the signal mid-run. (At 200
        // a second the whole apply once finished first: on two cores, this test's task can wait seconds for a
        // thread while the suite's other tests hold the pool.)
        try workspace.write(fleetManifest(registrations: 200, topics: 10))
        let env = ["FCM_EMULATOR_HOST": emulator.host]
        let common = ["-f", workspace.manifestPath, "--state", workspace.statePath]
        let run = try BackgroundRun(["apply", "--auto-approve", "--qps", "50"] + common, environment: env)
        #expect(try await waitUntil(seconds: 120) { try await subscriptionCount(emulator) >= 100 })
        kill(run.pid, signal)
        let result = await run.wait()
        let name = signal == SIGINT ? "SIGINT" : "SIGTERM"
        #expect(result.code == 128 + signal, "\(result.stderr)")
        // That the run stopped rather than finished is checked by what was left unsent (below); how soon it
        // stops is measured on the release build by scripts/chaos/kill-apply --signal, not against a clock here.
        #expect(result.stderr.contains("fcmctl: \(name) received: sending nothing more"), "\(result.stderr)")
        #expect(result.stderr.contains("error: interrupted by \(name): "), "\(result.stderr)")
        #expect(result.stderr.contains("Run apply again to continue"), "\(result.stderr)")
        // The summary says interrupted, not "finished with failures … 0 failed".
        #expect(result.stdout.contains("Apply interrupted: "), "\(result.stdout)")
        #expect(!result.stdout.contains("finished with failures"), "\(result.stdout)")
        // The state was written (the journal folded in) and the lock released.
        #expect(!FileManager.default.fileExists(atPath: workspace.statePath + ".lock"))
        #expect(!FileManager.default.fileExists(atPath: workspace.statePath + ".journal"))

        // Every subscription FCM holds is recorded: the requests on the wire were seen through.
        let inFCM = try await made(emulator)
        let (recorded, pending) = try await recorded(common)
        #expect(inFCM.count >= 100 && inFCM.count < 2_000, "\(inFCM.count)")
        #expect(inFCM.subtracting(recorded).subtracting(pending).isEmpty, "\(inFCM.subtracting(recorded).count) unrecorded")
        let counted = "\(recorded.count) operations done and recorded, \(2_000 - recorded.count) not attempted"
        #expect(result.stderr.contains(counted), "\(result.stderr)")

        // What is left is exactly what was not attempted, and the next apply neither waits nor takes a lock over.
        let plan = try await CLI.runBinary(["plan", "--detailed-exitcode"] + common, environment: env)
        #expect(plan.code == 2)
        #expect(plan.stdout.contains("\(2_000 - recorded.count) subscriptions to add"), "\(plan.stdout)")
        let rerun = try await CLI.runBinary(["apply", "--auto-approve"] + common, environment: env)
        #expect(rerun.code == 0, "\(rerun.stderr)")
        #expect(!rerun.stderr.contains("took over"), "\(rerun.stderr)")
        #expect(try await CLI.runBinary(["plan", "--detailed-exitcode"] + common, environment: env).code == 0)
        #expect(try await subscriptionCount(emulator) == 2_000)
    }

    @Test func aSecondSignalExitsAtOnceAndTheJournalKeepsEveryRecord() async throws {
        // Every request takes a second: the first signal's drain is still waiting for the requests on the wire
        // when the second comes (two signals sent back to back may reach the process as one).
        let emulator = try EmulatorProcess(arguments: ["--latency", "1000ms"])
        let workspace = try Workspace()
        try workspace.write(fleetManifest(registrations: 50, topics: 10))
        let env = ["FCM_EMULATOR_HOST": emulator.host]
        let common = ["-f", workspace.manifestPath, "--state", workspace.statePath]
        let run = try BackgroundRun(["apply", "--auto-approve"] + common, environment: env)
        #expect(try await waitUntil(seconds: 120) { try await subscriptionCount(emulator) >= 30 })
        kill(run.pid, SIGTERM)
        #expect(try await waitUntil(seconds: 60) { run.stderrSoFar.contains("fcmctl: SIGTERM received") })
        kill(run.pid, SIGTERM)
        let result = await run.wait()
        #expect(result.code == 143, "\(result.stderr)")
        #expect(result.stderr.contains("fcmctl: SIGTERM again: exiting now"), "\(result.stderr)")
        #expect(try await emulator.admin("PUT", "/emulator/v1/faults", json: "{\"latency_ms\": 0}").0 == 200)
        // Requests still on the wire when the process went may yet land: the intents in the journal cover them.
        let inFCM = try await made(emulator)
        let (recorded, pending) = try await recorded(common)
        #expect(inFCM.subtracting(recorded).subtracting(pending).isEmpty, "\(inFCM.subtracting(recorded).count) unrecorded")
        let rerun = try await CLI.runBinary(["apply", "--auto-approve"] + common, environment: env)
        #expect(rerun.code == 0, "\(rerun.stderr)")
        #expect(try await CLI.runBinary(["plan", "--detailed-exitcode"] + common, environment: env).code == 0)
    }

    @Test(arguments: [SIGTERM, SIGINT])
    func aSignalDuringPlanExitsAtOnceAndLeavesNothingBehind(signal: Int32) async throws {
        // Every read takes a second, two at a time: the plan is refreshing for as long as the test needs.
        let emulator = try EmulatorProcess(arguments: ["--latency", "1000ms"])
        let workspace = try Workspace()
        try workspace.write(fleetManifest(registrations: 40, topics: 2))
        let env = ["FCM_EMULATOR_HOST": emulator.host]
        let common = ["-f", workspace.manifestPath, "--state", workspace.statePath]
        let run = try BackgroundRun(["plan", "--parallelism", "2"] + common, environment: env)
        #expect(try await waitUntil(seconds: 120) { run.stderrSoFar.contains("Refreshing") })
        // plan takes no lock: none is ever there to release.
        #expect(!FileManager.default.fileExists(atPath: workspace.statePath + ".lock"))
        kill(run.pid, signal)
        let result = await run.wait()
        #expect(result.code == 128 + signal, "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: workspace.statePath + ".lock"))
        #expect(!FileManager.default.fileExists(atPath: workspace.statePath))
    }

    @Test func theTimeoutStopsTheApplyWithExitThreeAndEverythingRecorded() async throws {
        let emulator = try EmulatorProcess()
        let workspace = try Workspace()
        try workspace.write(fleetManifest(registrations: 100, topics: 10))
        let env = ["FCM_EMULATOR_HOST": emulator.host]
        let common = ["-f", workspace.manifestPath, "--state", workspace.statePath]
        // 1,000 changes at 100 a second take 10 s: the 1 s timeout always comes first.
        let result = try await CLI.runBinary(["apply", "--auto-approve", "--qps", "100", "--timeout", "1s"] + common, environment: env)
        #expect(result.code == 3, "\(result.stderr)")
        #expect(result.stderr.contains("error: apply reached its --timeout of 1s: "), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: workspace.statePath + ".lock"))
        let inFCM = try await made(emulator)
        let (recorded, pending) = try await recorded(common)
        #expect(inFCM.count < 1_000)
        #expect(inFCM.subtracting(recorded).subtracting(pending).isEmpty, "\(inFCM.subtracting(recorded).count) unrecorded")
        let plan = try await CLI.runBinary(["plan", "--detailed-exitcode"] + common, environment: env)
        #expect(plan.stdout.contains("\(1_000 - recorded.count) subscriptions to add"), "\(plan.stdout)")
    }
}
