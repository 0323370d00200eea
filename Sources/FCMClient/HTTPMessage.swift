import FCMCore
import Foundation

package struct HTTPRequest: Sendable {
    package var method: String
    package var url: String
    package var headers: [(String, String)]
    package var body: Data?
    /// A deadline shorter than the transport's own, in milliseconds: a request sent under a lease must end
    /// while the lease is known held.
    package var timeoutMilliseconds: Int?
    /// The latest moment (`StateLock.now()`) the request may still be started: a process paused between the
    /// lease check and the send must not send once it resumes.
    package var notAfter: Double?
    /// Less than the transport keeps of any answer: curl stops the transfer past it (a credential answer).
    package var maximumResponseBytes: Int?

    package init(method: String, url: String, headers: [(String, String)] = [], body: Data? = nil) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
    }

    /// Whether two header lists are the same, in order (strings made once compare at a glance).
    static func sameHeaders(_ one: [(String, String)], _ other: [(String, String)]) -> Bool {
        one.count == other.count && zip(one, other).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
    }
}

package struct HTTPResponse: Sendable {
    package var status: Int
    /// The headers fcmctl reads (Retry-After and GCS's x-goog-*), names lower-cased; the last value wins.
    package var headers: [String: String]
    package var body: Data
    /// An earlier attempt of the same request went unanswered (cut connection, timeout, 5xx): its change
    /// may have been made, so an answer such as "already exists" may describe that attempt's work.
    package var earlierAttemptUnanswered = false

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
    /// The server answered, but more than this many bytes: curl stopped the transfer.
    package var answerLimit: Int?

    package init(url: String, message: String, answerLimit: Int? = nil) {
        self.url = url
        self.message = message
        self.answerLimit = answerLimit
    }

    /// The URL names a registration in its path on most FCM endpoints: it is redacted here, the one place
    /// this error becomes text.
    package var description: String {
        if let answerLimit {
            return "\(Self.redactedURL(url)) answered more than \(answerLimit) bytes, which fcmctl does not take: the transfer was stopped"
        }
        return "could not reach \(Self.redactedURL(url)): \(message)"
    }

    /// scheme://host/path with every path segment that looks like a registration (decoded: 30+ characters
    /// with a ':', a FID, or 64+ characters) shortened as `Redactor` does, and the query left out.
    package static func redactedURL(_ url: String) -> String {
        let withoutQuery = url.split(separator: "?", maxSplits: 1).first.map(String.init) ?? url
        let redactor = Redactor(showTokens: false)
        return withoutQuery.split(separator: "/", omittingEmptySubsequences: false).map { segment -> String in
            let decoded = String(segment).removingPercentEncoding ?? String(segment)
            return Registration.looksLikeRegistrationInText(decoded) && !decoded.hasPrefix("http") ? redactor.redact(decoded) : String(segment)
        }.joined(separator: "/")
    }
}

/// Anything that can carry an HTTP request; tests substitute a closure.
package protocol HTTPTransport: Sendable {
    func send(_ request: HTTPRequest) async throws -> HTTPResponse
}

/// A request fcmctl refuses to send as it stands (a header that would split into others): never retried.
package struct UnsendableRequest: Error, Sendable, CustomStringConvertible {
    package var description: String
    package init(_ description: String) { self.description = description }
}
