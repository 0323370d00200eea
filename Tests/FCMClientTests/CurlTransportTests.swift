import FCMClient
import Foundation
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
    private let streamSocket = Int32(SOCK_STREAM.rawValue)
#elseif canImport(Darwin)
    import Darwin
    private let streamSocket = SOCK_STREAM
#endif

/// A blocking HTTP/1.1 server on loopback that answers every request with which connection it came on,
/// and closes each connection after `answersPerConnection` answers; a silent one reads requests and never
/// answers, so a request stays in flight until the client gives up on it.
final class LoopbackServer: @unchecked Sendable {
    let port: UInt16
    private let listener: Int32
    private let answersPerConnection: Int
    private let silent: Bool
    private let received = Mutex(0)

    /// Requests read in full so far.
    var requestsReceived: Int { received.withLock { $0 } }

    init(answersPerConnection: Int, silent: Bool = false) throws {
        self.answersPerConnection = answersPerConnection
        self.silent = silent
        let listener = socket(AF_INET, streamSocket, 0)
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
            received.withLock { $0 += 1 }
            if silent {
                // Holding the connection open keeps the request in flight until the client drops it.
                while read(client, &buffer, buffer.count) > 0 {}
                return
            }
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

    /// Every loop this platform has: each test runs on each, so the one Linux does not use by default (the
    /// only one on macOS) is not untested code.
    static let loops = CurlTransport.Loop.allCases

    @Test(arguments: loops) func anIdleConnectionIsReused(loop: CurlTransport.Loop) async throws {
        let server = try LoopbackServer(answersPerConnection: 3)
        let transport = try CurlTransport(options: .init(loop: loop))
        defer { transport.shutdown() }
        #expect(try await get(transport, server) == "connection 1 request 1")
        // epoll keeps the idle socket registered for the next request; curl_multi_poll watches none.
        #expect(transport.parkedSockets == (loop == .poll ? 0 : 1))
        #expect(try await get(transport, server) == "connection 1 request 2")
        #expect(try await get(transport, server) == "connection 1 request 3")
    }

    @Test(arguments: loops) func anIdleConnectionTheServerClosesIsDroppedAndTheNextRequestOpensAnother(loop: CurlTransport.Loop) async throws {
        let server = try LoopbackServer(answersPerConnection: 1)
        let transport = try CurlTransport(options: .init(loop: loop))
        defer { transport.shutdown() }
        #expect(try await get(transport, server) == "connection 1 request 1")
        // The server's close makes a parked socket readable: the epoll loop takes it out rather than waking on
        // it at every turn. Either way curl finds the connection dead when it would reuse it.
        #expect(try await eventually { transport.parkedSockets == 0 })
        #expect(try await get(transport, server) == "connection 2 request 1")
        #expect(try await get(transport, server) == "connection 3 request 1")
    }

    @Test(arguments: loops) func requestsInFlightTogetherShareTheConnectionsAllowed(loop: CurlTransport.Loop) async throws {
        let server = try LoopbackServer(answersPerConnection: 1000)
        let transport = try CurlTransport(options: .init(maximumConnectionsPerHost: 4, loop: loop))
        defer { transport.shutdown() }
        // Queued from tasks on the worker, as refresh and apply do: curl holds back what exceeds the limit.
        let bodies = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<64 { group.addTask(executorPreference: transport) { try await get(transport, server) } }
            return try await group.reduce(into: [String]()) { $0.append($1) }
        }
        #expect(Set(bodies).count == 64, "each request has an answer of its own")
        let connections = Set(bodies.map { $0.split(separator: " ")[1] })
        #expect(connections.count <= 4, "\(connections.sorted())")
    }

    @Test(arguments: loops) func shutdownFailsARequestInFlight(loop: CurlTransport.Loop) async throws {
        let server = try LoopbackServer(answersPerConnection: 1, silent: true)
        let transport = try CurlTransport(options: .init(loop: loop))
        let request = Task { try await get(transport, server) }
        #expect(try await eventually { server.requestsReceived == 1 })
        transport.shutdown()
        do {
            _ = try await request.value
            Issue.record("a request left unanswered succeeded")
        } catch let error as TransportError {
            #expect(error.message == "the HTTP client was shut down")
        }
    }

    @Test(arguments: loops) func aRequestAfterShutdownFails(loop: CurlTransport.Loop) async throws {
        let server = try LoopbackServer(answersPerConnection: 1)
        let transport = try CurlTransport(options: .init(loop: loop))
        transport.shutdown()
        await #expect(throws: TransportError.self) { try await get(transport, server) }
        #expect(server.requestsReceived == 0)
    }

    @Test(arguments: loops) func sleepersOnTheWorkerWakeInTheOrderTheyAreDue(loop: CurlTransport.Loop) async throws {
        final class Order: Sendable { let seen = Mutex<[Int]>([]) }
        let order = Order()
        let transport = try CurlTransport(options: .init(loop: loop))
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

    @Test func theLoopIsChosenByTheEnvironment() throws {
        #expect(CurlTransport.Loop(environment: ["FCMCTL_CURL_LOOP": "poll"]) == .poll)
        #expect(CurlTransport.Loop(environment: ["FCMCTL_CURL_LOOP": "POLL"]) == .poll)
        #expect(CurlTransport.Loop(environment: [:]) == .platformDefault)
        #expect(CurlTransport.Loop(environment: ["FCMCTL_CURL_LOOP": "kqueue"]) == .platformDefault)
        #if os(Linux)
            #expect(CurlTransport.Loop.platformDefault == .epoll)
            #expect(CurlTransport.Loop(environment: ["FCMCTL_CURL_LOOP": "epoll"]) == .epoll)
        #else
            #expect(CurlTransport.Loop(environment: ["FCMCTL_CURL_LOOP": "epoll"]) == .poll, "no epoll here")
        #endif
        let transport = try CurlTransport(options: .init(loop: .poll))
        defer { transport.shutdown() }
        #expect(transport.loop == .poll)
    }
}
