import FCMClient
import Foundation

/// A real `fcm-emulator` process on a free loopback port, stopped when the test is done with it: for tests about
/// the process (its state file across restarts) and for tests on real time (signals and their drain, token
/// lifetimes, a kill mid-run), which an emulator sharing the test process's threads could not keep. Others use
/// `InProcessEmulator`.
final class EmulatorProcess: EmulatorHandle, @unchecked Sendable {
    let process = Process()
    let host: String
    let transport: CurlTransport

    enum StartError: Error { case noListeningLine(String) }

    /// Tests of fcmctl's logic use made-up registrations, so the emulator auto-registers unless a test asks
    /// for its default, FCM-like mode with `--strict-registrations`.
    init(arguments: [String] = []) throws {
        transport = try CurlTransport()
        process.executableURL = BuildProducts.emulator
        let mode = arguments.contains("--strict-registrations") ? [] : ["--auto-register"]
        process.arguments = ["--host", "127.0.0.1", "--port", "0"] + mode + arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        // Block until the first line arrives (or the pipe closes because the process died): a condition,
        // not a sleep.
        var buffer = Data()
        while !buffer.contains(UInt8(ascii: "\n")) {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            buffer.append(chunk)
        }
        let line = String(decoding: buffer, as: UTF8.self).split(separator: "\n").first.map(String.init) ?? ""
        let prefix = "fcm-emulator listening on http://"
        guard line.hasPrefix(prefix) else {
            process.terminate()
            throw StartError.noListeningLine(line)
        }
        host = String(line.dropFirst(prefix.count))
    }

    deinit {
        transport.shutdown()
        stop()
    }

    /// SIGTERM, then wait: the emulator shuts down gracefully (and saves any --state-file).
    func stop() {
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
    }
}
