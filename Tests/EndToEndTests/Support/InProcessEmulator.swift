import FCMClient
import FCMEmulator
import Foundation

/// What tests ask of an emulator, whether it runs in this process or in its own.
protocol EmulatorHandle: AnyObject, Sendable {
    /// `127.0.0.1:PORT`.
    var host: String { get }
    /// The test's own libcurl client, for the admin API and raw FCM requests.
    var transport: CurlTransport { get }
}

/// The emulator's application in this process, on a free loopback port, reached over libcurl like the
/// process: for tests that need an FCM to talk to but nothing of a process (its signals, its files at exit).
final class InProcessEmulator: EmulatorHandle {
    let host: String
    let transport: CurlTransport
    private let server: EmbeddedEmulator

    /// `arguments` as `fcm-emulator` takes them; auto-registering unless `--strict-registrations`, as the process.
    init(arguments: [String] = []) async throws {
        transport = try CurlTransport()
        let mode = arguments.contains("--strict-registrations") ? [] : ["--auto-register"]
        server = try await EmbeddedEmulator.start(arguments: ["--host", "127.0.0.1", "--port", "0"] + mode + arguments)
        host = "127.0.0.1:\(server.port)"
    }

    deinit { transport.shutdown() }

    /// Stops listening: the port then refuses connections.
    func stop() async { await server.stop() }
}

extension EmulatorHandle {
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
