import Foundation

package struct HTTPRequest: Sendable {
    package var method: String
    package var url: String
    package var headers: [(String, String)]
    package var body: Data?

    package init(method: String, url: String, headers: [(String, String)] = [], body: Data? = nil) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
    }
}

package struct HTTPResponse: Sendable {
    package var status: Int
    /// Header names lower-cased; the last value wins.
    package var headers: [String: String]
    package var body: Data

    package init(status: Int, headers: [String: String] = [:], body: Data = Data()) {
        self.status = status
        self.headers = headers
        self.body = body
    }
}

/// A request that never produced an HTTP answer: connection refused, timeout, TLS failure.
package struct TransportError: Error, Sendable, CustomStringConvertible {
    package var url: String
    package var message: String

    package init(url: String, message: String) {
        self.url = url
        self.message = message
    }

    package var description: String { "could not reach \(url): \(message)" }
}

/// Anything that can carry an HTTP request; tests substitute a closure.
package protocol HTTPTransport: Sendable {
    func send(_ request: HTTPRequest) async throws -> HTTPResponse
}
