import FCMCommands
import FCMCore
import FCMEngine
import FCMViews
import Foundation

/// What one fcmctl invocation printed and returned.
struct CLIResult {
    var code: Int32
    var stdout: String
    var stderr: String
}

private final class Capture: @unchecked Sendable {
    private let lock = NSLock()
    private var out = ""
    private var err = ""

    func appendOut(_ text: String) { lock.withLock { out += text } }
    func appendErr(_ text: String) { lock.withLock { err += text } }
    var result: (String, String) { lock.withLock { (out, err) } }
}

enum CLI {
    /// Runs the real fcmctl command code in-process, capturing its output.
    /// On `clock` (a `ManualClock` for tests whose requests back off or are paced) it runs in the live world on
    /// that clock; without one, in the world the test set (`World.$current`). `environment` adds to the one the
    /// command sees.
    static func run(
        _ arguments: [String], emulator: (any EmulatorHandle)?, stdin: String? = nil, clock: (any RunClock)? = nil,
        environment extra: [String: String] = [:]
    ) async -> CLIResult {
        let capture = Capture()
        var environment: [String: String] = [:]
        if let emulator { environment["FCM_EMULATOR_HOST"] = emulator.host }
        // `FCMCTL_CURL_LOOP=poll swift test` runs the in-process commands on that loop too.
        environment["FCMCTL_CURL_LOOP"] = ProcessInfo.processInfo.environment["FCMCTL_CURL_LOOP"]
        environment.merge(extra) { $1 }
        let console = Console(
            writeOut: { capture.appendOut($0) }, writeErr: { capture.appendErr($0) },
            readLine: { stdin }, isInteractive: stdin != nil, environment: environment)
        let world = clock.map { World.live(clock: $0) } ?? World.current
        let code = await World.$current.withValue(world) {
            await Console.$current.withValue(console) { await FCMCtl.execute(arguments) }
        }
        let (out, err) = capture.result
        return CLIResult(code: code, stdout: out, stderr: err)
    }

    /// This process's environment without the emulator setting (a test gives it explicitly), plus `extra`.
    static func childEnvironment(_ extra: [String: String]) -> [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment["FCM_EMULATOR_HOST"] = nil
        environment.merge(extra) { $1 }
        return environment
    }

    /// Runs the built `fcmctl` binary, for what only a process shows: its exit status. The waiting happens
    /// on a thread of its own, so a test suite full of these never starves Swift's cooperative pool (which
    /// other tests' polling and in-process commands need).
    static func runBinary(_ arguments: [String], environment: [String: String] = [:]) async throws -> CLIResult {
        let process = Process()
        process.executableURL = BuildProducts.fcmctl
        process.arguments = arguments
        process.environment = childEnvironment(environment)
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        try process.run()
        return await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                let errData = DataCollector(err.fileHandleForReading)
                let outData = out.fileHandleForReading.readDataToEndOfFile()
                process.waitUntilExit()
                continuation.resume(
                    returning: CLIResult(
                        code: process.terminationStatus, stdout: String(decoding: outData, as: UTF8.self),
                        stderr: String(decoding: errData.finish(), as: UTF8.self)))
            }
        }
    }
}

/// Reads a pipe to its end on a thread of its own, so neither of a child's two pipes can fill and stall it.
final class DataCollector: @unchecked Sendable {
    private var data = Data()
    private let done = DispatchSemaphore(value: 0)

    init(_ handle: FileHandle) {
        Thread.detachNewThread { [self] in
            data = handle.readDataToEndOfFile()
            done.signal()
        }
    }

    func finish() -> Data {
        done.wait()
        return data
    }
}

/// A scratch directory with manifest files, removed afterwards.
final class Workspace: @unchecked Sendable {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("fcmctl-test-\(UUID().uuidString)")
        // A checkout, as users' manifests live in one: fcmctl reads manifests and device files only inside it.
        try FileManager.default.createDirectory(at: url.appendingPathComponent(".git"), withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: url) }

    var manifestPath: String { url.appendingPathComponent("fcmctl.yaml").path }
    var statePath: String { url.appendingPathComponent("state/state.json").path }

    func write(_ text: String, to name: String = "fcmctl.yaml") throws {
        try text.write(to: url.appendingPathComponent(name), atomically: true, encoding: .utf8)
    }
}

/// Registrations that look like real FCM tokens, distinct per index.
func token(_ index: Int, prefix: String = "dev") -> String {
    "\(prefix)\(index):APA91b" + String(repeating: "x", count: 20) + String(index)
}
