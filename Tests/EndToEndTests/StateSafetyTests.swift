import FCMCore
import FCMState
import FCMViews
import Foundation
import Testing

/// The ledger survives what a pipeline meets: two runs at once, kill -9, unreadable or full disks.
/// Every case runs the built binary against a real emulator.
@Suite(.serialized) struct StateSafetyTests {
    func mutations(_ emulator: any EmulatorHandle) async throws -> Int {
        try await emulator.requestLog().filter { $0["method"] as? String != "GET" }.count
    }

    func subscriptionCount(_ emulator: any EmulatorHandle) async throws -> Int {
        try await emulator.admin("GET", "/emulator/v1/stats").1["subscriptions"] as? Int ?? -1
    }

    func setLatency(_ emulator: any EmulatorHandle, milliseconds: Int) async throws {
        #expect(try await emulator.admin("PUT", "/emulator/v1/faults", json: "{\"latency_ms\": \(milliseconds)}").0 == 200)
    }

    @Test func secondApplyExitsFourNamingTheHolderAndNothingIsLost() async throws {
        // Every request takes a second until the test lets go: the first run holds the lock for as long as the
        // checks need, however slowly a loaded machine schedules this test.
        let emulator = try await InProcessEmulator(arguments: ["--latency", "1000ms"])
        let workspace = try Workspace()
        try workspace.write(fleetManifest(registrations: 30, topics: 10))
        let env = ["FCM_EMULATOR_HOST": emulator.host]
        let common = ["-f", workspace.manifestPath, "--state", workspace.statePath]
        let first = try BackgroundRun(["apply", "--auto-approve", "--parallelism", "2"] + common, environment: env)
        let holding = try await waitUntil(seconds: 120) { FileManager.default.fileExists(atPath: workspace.statePath + ".lock") }
        guard holding else {
            Issue.record("the first apply never held the lock: \(await first.wait().stderr)")
            return
        }
        // plan only reads: it takes no lock, reads one generation with the apply's journal so far, and writes
        // nothing, so it runs beside the apply (with read-only credentials too).
        let lockBefore = try Data(contentsOf: URL(fileURLWithPath: workspace.statePath + ".lock"))
        let reading = try await CLI.runBinary(["plan", "--detailed-exitcode"] + common, environment: env)
        #expect(reading.code == 2, "\(reading.stderr)")
        #expect(reading.stderr.contains("read without a lock"), "\(reading.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: workspace.statePath + ".lock")) == lockBefore)
        for command in [["apply", "--auto-approve"], ["state", "rm", "topic/topic-1"]] {
            let second = try await CLI.runBinary(command + common, environment: env)
            #expect(second.code == 4, "\(command): \(second.stderr)")
            #expect(second.stderr.contains("is locked by"), "\(second.stderr)")
            #expect(second.stderr.contains("(pid \(first.pid)), operation apply"), "\(second.stderr)")
            #expect(second.stderr.contains("fcmctl state unlock "), "\(second.stderr)")
        }
        try await setLatency(emulator, milliseconds: 0)
        let result = await first.wait()
        #expect(result.code == 0, "\(result.stderr)")
        let clean = try await CLI.runBinary(["plan", "--detailed-exitcode"] + common, environment: env)
        #expect(clean.code == 0, "\(clean.stdout)\(clean.stderr)")
        let list = try await CLI.runBinary(["state", "list", "topic/topic-3"] + common)
        #expect(list.stdout.split(separator: "\n").count == 30)
        #expect(try await subscriptionCount(emulator) == 300)
    }

    @Test func killedFirstApplyLosesNoRecordAndItsLockDoesNotBlock() async throws {
        // 1,000 changes at 50 ms each, 8 at a time: about 6 s, a wide window for the kill however loaded.
        let emulator = try EmulatorProcess(arguments: ["--latency", "50ms"])
        let workspace = try Workspace()
        try workspace.write(fleetManifest(registrations: 50, topics: 20))
        let env = ["FCM_EMULATOR_HOST": emulator.host]
        let common = ["-f", workspace.manifestPath, "--state", workspace.statePath]
        let victim = try BackgroundRun(["apply", "--auto-approve", "--parallelism", "8"] + common, environment: env)
        #expect(try await waitUntil(seconds: 120) { try await subscriptionCount(emulator) >= 200 })
        await victim.killNow()
        try await setLatency(emulator, milliseconds: 0)
        let made = try await subscriptionCount(emulator)
        #expect(made >= 200 && made < 1000)

        // Every subscription in FCM is recorded or pending (to be checked): none is unknown to fcmctl.
        let pulled = try await CLI.runBinary(["state", "pull"] + common)
        #expect(pulled.code == 0, "\(pulled.stderr)")
        #expect(pulled.stderr.contains("Recovered"), "\(pulled.stderr)")
        let ledger = try StateFileFormat.decode(Array(pulled.stdout.utf8), source: "pull").ledger
        let known = ledger.topics.values.reduce(0) { $0 + $1.count } + ledger.pending.subscriptions.values.reduce(0) { $0 + $1.count }
        #expect(known >= made)

        let rerun = try await CLI.runBinary(["apply", "--auto-approve"] + common, environment: env)
        #expect(rerun.code == 0, "\(rerun.stderr)")
        #expect(rerun.stderr.contains("took over the state lock"), "\(rerun.stderr)")
        #expect(try await CLI.runBinary(["plan", "--detailed-exitcode"] + common, environment: env).code == 0)

        // Removing every topic removes every subscription fcmctl made: no orphans.
        try workspace.write("apiVersion: fcmctl/v1\nproject: {id: state-test, senderId: \"42\"}\ntopics: {}\n")
        let emptied = try await CLI.runBinary(["apply", "--auto-approve", "--allow-empty"] + common, environment: env)
        #expect(emptied.code == 0, "\(emptied.stderr)")
        #expect(try await subscriptionCount(emulator) == 0)
    }

    @Test func stateThatCannotBeWrittenOrReadStopsBeforeAnyRequest() async throws {
        let emulator = try await InProcessEmulator()
        let workspace = try Workspace()
        try workspace.write(fleetManifest(registrations: 3, topics: 2))
        let env = ["FCM_EMULATOR_HOST": emulator.host]
        let stateDirectory = workspace.url.appendingPathComponent("state").path
        try FileManager.default.createDirectory(atPath: stateDirectory, withIntermediateDirectories: true)
        let common = ["-f", workspace.manifestPath, "--state", workspace.statePath]

        // Read-only for the user running fcmctl.
        chmod(stateDirectory, 0o755)
        let readOnly = try await BackgroundRun.run(["apply", "--auto-approve"] + common, environment: env, as: "65534")
        #expect(readOnly.code == 1, "\(readOnly.stderr)")
        #expect(readOnly.stderr.contains("Permission denied") && readOnly.stderr.contains("Nothing was sent"), "\(readOnly.stderr)")

        // Unreadable: never mistaken for "no state yet".
        FileManager.default.createFile(atPath: workspace.statePath, contents: Data(StateFileFormat.encode(Ledger(lineage: "L", serial: 3))))
        chmod(stateDirectory, 0o700)
        let unreadable = try await BackgroundRun.run(["plan", "--lock=false"] + common, environment: env, as: "65534")
        #expect(unreadable.code == 1, "\(unreadable.stderr)")
        #expect(unreadable.stderr.contains("state.json: cannot read the state: Permission denied"), "\(unreadable.stderr)")
        #expect(!unreadable.stdout.contains("Plan:"))
        #expect(try await mutations(emulator) == 0)
    }

    @Test func fullDiskStopsBeforeAnyRequest() async throws {
        let emulator = try await InProcessEmulator()
        let workspace = try Workspace()
        try workspace.write(fleetManifest(registrations: 40, topics: 10))
        let mountPoint = workspace.url.appendingPathComponent("state").path
        try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: true)
        let mount = try BackgroundRun.runTool("/bin/mount", ["-t", "tmpfs", "-o", "size=64k", "tmpfs", mountPoint])
        #expect(mount == 0, "this test needs to mount a small tmpfs (it runs as root in CI)")
        defer { _ = try? BackgroundRun.runTool("/bin/umount", [mountPoint]) }
        let result = try await CLI.runBinary(
            ["apply", "--auto-approve", "-f", workspace.manifestPath, "--state", workspace.statePath],
            environment: ["FCM_EMULATOR_HOST": emulator.host])
        #expect(result.code == 1, "\(result.stderr)")
        #expect(result.stderr.contains("No space left on device") && result.stderr.contains("Nothing was sent"), "\(result.stderr)")
        #expect(try await mutations(emulator) == 0)
    }

    @Test func exhaustedSerialAndDamagedJournalStopBeforeAnyRequest() async throws {
        let emulator = try await InProcessEmulator()
        let workspace = try Workspace()
        try workspace.write(fleetManifest(registrations: 2, topics: 1))
        let env = ["FCM_EMULATOR_HOST": emulator.host]
        let common = ["apply", "--auto-approve", "-f", workspace.manifestPath, "--state", workspace.statePath]
        let store = LocalStateStore(path: workspace.statePath)
        _ = try await store.write(Ledger(lineage: "L", serial: Int.max), replacing: nil)
        let exhausted = try await CLI.runBinary(common, environment: env)
        #expect(exhausted.code == 1, "\(exhausted.stderr)")
        #expect(exhausted.stderr.contains("serial \(Int.max) cannot be increased"), "\(exhausted.stderr)")

        _ = try await store.write(Ledger(lineage: "L", serial: 3), replacing: StateVersion(lineage: "L", serial: Int.max), force: true)
        let journal = "{\"run\":\"r\",\"lineage\":\"L\",\"base_serial\":3}\n{\"intent\":1,oops\n{\"done\":[1]}\n"
        try journal.write(toFile: store.journalPath, atomically: true, encoding: .utf8)
        let damaged = try await CLI.runBinary(common, environment: env)
        #expect(damaged.code == 1, "\(damaged.stderr)")
        #expect(damaged.stderr.contains("\(store.journalPath):2: not a valid journal record"), "\(damaged.stderr)")
        #expect(try await mutations(emulator) == 0)
    }
}

extension BackgroundRun {
    static func runTool(_ path: String, _ arguments: [String]) throws -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        return process.terminationStatus
    }
}
