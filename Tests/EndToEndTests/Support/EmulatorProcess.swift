import FCMClient
import Foundation

/// A real `fcm-emulator` process on a free loopback port, stopped when the test is done with it.
final class EmulatorProcess: @unchecked Sendable {
    let process = Process()
    let host: String
    let transport = CurlTransport()

    enum StartError: Error { case noListeningLine(String) }

    /// Tests of fcmctl's logic use made-up registrations, so the emulator auto-registers unless a test asks
    /// for its default, FCM-like mode with `--strict-registrations`.
    init(arguments: [String] = []) throws {
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

    var baseURL: String { "http://\(host)" }

    /// Sends an FCM API request with the emulator's always-valid "owner" token.
    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        var request = request
        request.headers.append(("Authorization", "Bearer owner"))
        return try await transport.send(request)
    }

    func admin(_ method: String, _ path: String, json: String? = nil) async throws -> (Int, [String: Any]) {
        let request = HTTPRequest(
            method: method, url: baseURL + path, headers: [("Content-Type", "application/json")], body: json.map { Data($0.utf8) })
        let response = try await send(request)
        let object = (try? JSONSerialization.jsonObject(with: response.body) as? [String: Any]) ?? [:]
        return (response.status, object)
    }

    func stateDump() async throws -> Data {
        try await transport.send(HTTPRequest(method: "GET", url: baseURL + "/emulator/v1/state")).body
    }

    func groupMembers(sender: String, name: String) async throws -> [String]? {
        let (_, state) = try await admin("GET", "/emulator/v1/state")
        let groups = state["groups"] as? [[String: Any]] ?? []
        return groups.first { $0["name"] as? String == name && $0["sender_id"] as? String == sender }?["members"] as? [String]
    }

    func topics(of registration: String) async throws -> [String] {
        let (_, state) = try await admin("GET", "/emulator/v1/state")
        let registrations = state["registrations"] as? [[String: Any]] ?? []
        return registrations.first { $0["id"] as? String == registration }?["topics"] as? [String] ?? []
    }

    func requestLog() async throws -> [[String: Any]] {
        try await admin("GET", "/emulator/v1/requests").1["requests"] as? [[String: Any]] ?? []
    }
}
