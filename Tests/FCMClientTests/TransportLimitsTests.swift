import FCMClient
import Foundation
import Testing

/// The bounds a transport keeps whatever it is sent or answered: every request ends by its deadline, even one
/// that never got a connection; headers curl would refuse are never handed to it; an answer is cut at its bound.
@Suite struct TransportLimitsTests {
    static let loops = CurlTransport.Loop.allCases

    func url(_ server: LoopbackServer) -> String { "http://127.0.0.1:\(server.port)/" }

    /// With one connection allowed and it held by an unanswered request, the next request waits in curl for a
    /// connection, where libcurl before 8.8 never timed it out: it must still end at its own deadline, unsent.
    @Test(arguments: loops) func aRequestThatNeverGetsAConnectionEndsAtItsDeadline(loop: CurlTransport.Loop) async throws {
        let server = try LoopbackServer(answersPerConnection: 1, silent: true)
        var options = CurlTransport.Options(maximumConnectionsPerHost: 1, loop: loop)
        options.totalTimeout = .seconds(20)
        let transport = try CurlTransport(options: options)
        defer { transport.shutdown() }
        let holder = Task { try await transport.send(HTTPRequest(method: "GET", url: url(server))) }
        defer { holder.cancel() }
        for _ in 0..<10_000 where server.requestsReceived == 0 { try await Task.sleep(for: .milliseconds(1)) }
        #expect(server.requestsReceived == 1, "the first request holds the only connection")
        var waiting = HTTPRequest(method: "GET", url: url(server))
        waiting.timeoutMilliseconds = 1000
        let started = ContinuousClock.now
        do {
            _ = try await transport.send(waiting)
            Issue.record("a request with no connection was answered")
        } catch let error as TransportError {
            #expect(error.message == "not sent within 1 s: no connection to the server became free for it", "\(error)")
        }
        let elapsed = ContinuousClock.now - started
        #expect(elapsed >= .milliseconds(950) && elapsed < .seconds(15), "\(elapsed)")  // a hang, not a slow machine
        #expect(server.requestsReceived == 1, "the expired request never reached the server")
    }

    /// A request the server takes and never answers ends at its deadline whichever of curl and the worker ends it.
    @Test(arguments: loops) func anUnansweredRequestEndsAtItsDeadline(loop: CurlTransport.Loop) async throws {
        let server = try LoopbackServer(answersPerConnection: 1, silent: true)
        let transport = try CurlTransport(options: .init(loop: loop))
        defer { transport.shutdown() }
        var request = HTTPRequest(method: "GET", url: url(server))
        request.timeoutMilliseconds = 500
        let started = ContinuousClock.now
        await #expect(throws: TransportError.self) { try await transport.send(request) }
        let elapsed = ContinuousClock.now - started
        #expect(elapsed >= .milliseconds(450) && elapsed < .seconds(15), "\(elapsed)")  // a hang, not a slow machine
    }

    /// curl fails a request head over 1 MiB before sending it, and libcurl 7.88 then kept the next request on
    /// that connection waiting for ever (the 1 MiB access token that hung `plan`): such headers are refused first.
    @Test(arguments: loops) func headersCurlWouldRefuseAreNeverHandedToIt(loop: CurlTransport.Loop) async throws {
        let server = try LoopbackServer(answersPerConnection: 10)
        let transport = try CurlTransport(options: .init(loop: loop))
        defer { transport.shutdown() }
        let huge = String(repeating: "a", count: 1 << 20)
        let started = ContinuousClock.now
        do {
            _ = try await transport.send(HTTPRequest(method: "GET", url: url(server), headers: [("Authorization", "Bearer \(huge)")]))
            Issue.record("a 1 MiB header was sent")
        } catch let error as UnsendableRequest {
            #expect(error.description.contains("its headers hold 1048600 bytes, over the 262144 fcmctl sends"), "\(error)")
            #expect(!error.description.contains("aaaa"), "the header's value is not echoed")
        }
        #expect(ContinuousClock.now - started < .seconds(1))
        let response = try await transport.send(HTTPRequest(method: "GET", url: url(server)))
        #expect(response.status == 200, "the transport goes on serving")
        #expect(server.requestsReceived == 1)
    }

    @Test(arguments: loops) func anAnswerOverTheRequestsBoundIsCutAndSaidSo(loop: CurlTransport.Loop) async throws {
        let server = try LoopbackServer(answersPerConnection: 10)
        let transport = try CurlTransport(options: .init(loop: loop))
        defer { transport.shutdown() }
        var request = HTTPRequest(method: "GET", url: url(server))
        request.maximumResponseBytes = 10
        do {
            _ = try await transport.send(request)
            Issue.record("a 22-byte answer passed a 10-byte bound")
        } catch let error as TransportError {
            #expect(error.answerLimit == 10)
            #expect("\(error)".contains("answered more than 10 bytes"), "\(error)")
        }
        let whole = try await transport.send(HTTPRequest(method: "GET", url: url(server)))
        #expect(String(decoding: whole.body, as: UTF8.self).hasPrefix("connection"), "the bound was the request's, not the transport's")
    }

    @Test(arguments: loops) func theTotalConnectionBoundHolds(loop: CurlTransport.Loop) async throws {
        let server = try LoopbackServer(answersPerConnection: 1000)
        var options = CurlTransport.Options(maximumConnectionsPerHost: 64, loop: loop)
        options.maximumTotalConnections = 2
        let transport = try CurlTransport(options: options)
        defer { transport.shutdown() }
        let bodies = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<32 {
                group.addTask(executorPreference: transport) {
                    String(decoding: try await transport.send(HTTPRequest(method: "GET", url: url(server))).body, as: UTF8.self)
                }
            }
            return try await group.reduce(into: [String]()) { $0.append($1) }
        }
        #expect(bodies.count == 32)
        #expect(Set(bodies.map { $0.split(separator: " ")[1] }).count <= 2)
    }

    @Test func theOpenFileLimitBoundsTheConnections() throws {
        #expect(try DescriptorBudget.connections(wanted: 512, limit: nil) == 512)
        #expect(try DescriptorBudget.connections(wanted: 512, limit: 1024) == 512)
        #expect(try DescriptorBudget.connections(wanted: 512, limit: 64) == 64 - DescriptorBudget.reserved)
        #expect(try DescriptorBudget.connections(wanted: 512, limit: 36) == 4)
        do {
            _ = try DescriptorBudget.connections(wanted: 512, limit: 35)
            Issue.record("35 descriptors were taken for enough")
        } catch {
            #expect("\(error)".contains("the open-file limit is 35 (ulimit -n), too low for fcmctl, which needs at least 36"))
            #expect("\(error)".contains("raise it"))
        }
    }
}
