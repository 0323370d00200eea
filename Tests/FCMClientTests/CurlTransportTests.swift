import FCMClient
import Foundation
import Glibc
import Synchronization
import Testing

/// A blocking HTTP/1.1 server on loopback that answers every request with which connection it came on,
/// and closes each connection after `answersPerConnection` answers.
final class LoopbackServer: @unchecked Sendable {
    let port: UInt16
    private let listener: Int32
    private let answersPerConnection: Int

    init(answersPerConnection: Int) throws {
        self.answersPerConnection = answersPerConnection
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.listener = listener
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, length) } }
        guard bound == 0, listen(listener, 16) == 0 else { throw POSIXError(.EADDRINUSE) }
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) }
        }
        port = UInt16(bigEndian: address.sin_port)
        Thread { [self] in serve() }.start()
    }

    deinit { close(listener) }

    private func serve() {
        var connection = 0
        while true {
            let client = accept(listener, nil, nil)
            guard client >= 0 else { return }
            connection += 1
            let number = connection
            Thread { [self] in answer(client, connection: number) }.start()
        }
    }

    private func answer(_ client: Int32, connection: Int) {
        defer { close(client) }
        var pending = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 4096)
        for request in 1...answersPerConnection {
            while !pending.containsHeaderEnd {
                let count = read(client, &buffer, buffer.count)
                guard count > 0 else { return }
                pending += buffer[0..<count]
            }
            pending.removeFirst(pending.headerEnd)
            let body = "connection \(connection) request \(request)"
            let response = "HTTP/1.1 200 OK\r\nContent-Length: \(body.utf8.count)\r\nContent-Type: text/plain\r\n\r\n\(body)"
            _ = response.withCString { write(client, $0, strlen($0)) }
        }
    }
}

extension [UInt8] {
    var headerEnd: Int {
        for index in 0..<Swift.max(0, count - 3) where self[index..<index + 4].elementsEqual("\r\n\r\n".utf8) { return index + 4 }
        return 0
    }
    var containsHeaderEnd: Bool { headerEnd > 0 }
}

@Suite struct CurlTransportTests {
    func get(_ transport: CurlTransport, _ server: LoopbackServer) async throws -> String {
        let response = try await transport.send(HTTPRequest(method: "GET", url: "http://127.0.0.1:\(server.port)/", headers: []))
        #expect(response.status == 200)
        return String(decoding: response.body, as: UTF8.self)
    }

    /// Waits for a condition the worker thread brings about, for at most ten seconds.
    func eventually(_ condition: () -> Bool) async throws -> Bool {
        for _ in 0..<10_000 {
            if condition() { return true }
            try await Task.sleep(for: .milliseconds(1))
        }
        return condition()
    }

    @Test func anIdleConnectionStaysWatchedAndIsReused() async throws {
        let server = try LoopbackServer(answersPerConnection: 3)
        let transport = CurlTransport()
        defer { transport.shutdown() }
        #expect(try await get(transport, server) == "connection 1 request 1")
        #expect(transport.parkedSockets == 1)
        #expect(try await get(transport, server) == "connection 1 request 2")
        #expect(try await get(transport, server) == "connection 1 request 3")
    }

    @Test func anIdleConnectionTheServerClosesIsDroppedAndTheNextRequestOpensAnother() async throws {
        let server = try LoopbackServer(answersPerConnection: 1)
        let transport = CurlTransport()
        defer { transport.shutdown() }
        #expect(try await get(transport, server) == "connection 1 request 1")
        // The server's close makes the parked socket readable: the worker takes it out of epoll rather than
        // waking on it at every turn.
        #expect(try await eventually { transport.parkedSockets == 0 })
        #expect(try await get(transport, server) == "connection 2 request 1")
        #expect(try await get(transport, server) == "connection 3 request 1")
    }

    @Test func sleepersOnTheWorkerWakeInTheOrderTheyAreDue() async {
        final class Order: Sendable { let seen = Mutex<[Int]>([]) }
        let order = Order()
        let transport = CurlTransport()
        defer { transport.shutdown() }
        await withTaskGroup(of: Void.self) { group in
            for milliseconds in [300, 10, 120] {
                // On the worker, resumed tasks run in the order the worker resumes them.
                group.addTask(executorPreference: transport) {
                    await transport.sleep(seconds: Double(milliseconds) / 1000)
                    order.seen.withLock { $0.append(milliseconds) }
                }
            }
        }
        #expect(order.seen.withLock { $0 } == [10, 120, 300])
    }
}
