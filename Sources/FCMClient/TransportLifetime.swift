/// Ties a libcurl transport's worker thread to the value that uses it: when the last holder lets go, the
/// worker is stopped. For transports whose users cannot say when they are done (a state store is passed
/// around and dropped), so no transport outlives every reference to it.
package final class TransportLifetime: Sendable {
    package let transport: CurlTransport

    package init(_ transport: CurlTransport) { self.transport = transport }

    deinit { transport.shutdown() }
}
