import Foundation

/// The built `fcmctl` running in the background, for what only concurrent processes show: locks, kill -9.
/// Output goes to files, so a chatty child never blocks on a full pipe.
final class BackgroundRun: @unchecked Sendable {
    let process = Process()
    private let outURL: URL
    private let errURL: URL

    init(_ arguments: [String], environment: [String: String] = [:], as user: String? = nil) throws {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("fcmctl-run-\(UUID().uuidString)")
        outURL = scratch.appendingPathExtension("out")
        errURL = scratch.appendingPathExtension("err")
        FileManager.default.createFile(atPath: outURL.path, contents: nil)
        FileManager.default.createFile(atPath: errURL.path, contents: nil)
        if let user {
            process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
            process.arguments = ["--reuid=\(user)", "--regid=\(user)", "--clear-groups", BuildProducts.fcmctl.path] + arguments
        } else {
            process.executableURL = BuildProducts.fcmctl
            process.arguments = arguments
        }
        process.environment = CLI.childEnvironment(environment)
        process.standardOutput = try FileHandle(forWritingTo: outURL)
        process.standardError = try FileHandle(forWritingTo: errURL)
        process.standardInput = FileHandle.nullDevice
        try process.run()
    }

    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        try? FileManager.default.removeItem(at: outURL)
        try? FileManager.default.removeItem(at: errURL)
    }

    var pid: Int32 { process.processIdentifier }

    /// What the run has written to stderr so far.
    var stderrSoFar: String { (try? String(contentsOf: errURL, encoding: .utf8)) ?? "" }

    func killNow() async {
        kill(process.processIdentifier, SIGKILL)
        await exited()
    }

    func wait() async -> CLIResult {
        await exited()
        return CLIResult(
            code: process.terminationStatus,
            stdout: (try? String(contentsOf: outURL, encoding: .utf8)) ?? "",
            stderr: (try? String(contentsOf: errURL, encoding: .utf8)) ?? "")
    }

    /// Waits for the process to end on a thread of its own: `waitUntilExit` blocks (and spins) the thread it
    /// runs on, and on the two threads of a 2-core runner's task pool two such waits once starved the
    /// in-process emulator the waited-for apply was talking to, so neither ever ended.
    private func exited() async {
        let process = self.process
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            Thread.detachNewThread {
                process.waitUntilExit()
                continuation.resume()
            }
        }
    }

    /// Runs the binary to completion (optionally as another user), like `CLI.runBinary`.
    static func run(_ arguments: [String], environment: [String: String] = [:], as user: String? = nil) async throws -> CLIResult {
        try await BackgroundRun(arguments, environment: environment, as: user).wait()
    }
}

/// Polls `condition` until it holds or `seconds` pass: waiting for an event another process causes.
func waitUntil(seconds: Double = 60, _ condition: () async throws -> Bool) async throws -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if try await condition() { return true }
        try await Task.sleep(for: .milliseconds(10))
    }
    return try await condition()
}

/// A manifest of `registrations` tokens each subscribed to `topics` topics.
func fleetManifest(registrations: Int, topics: Int, project: String = "state-test") -> String {
    var text = "apiVersion: fcmctl/v1\nproject: {id: \(project), senderId: \"42\"}\ntopics:\n"
    for topic in 0..<topics {
        text += "  topic-\(topic):\n    members:\n"
        for index in 0..<registrations { text += "      - \"\(token(index, prefix: "fleet"))\"\n" }
    }
    return text
}
