import CCurl
import Foundation

/// libcurl's own wait: curl_multi_poll over every socket of the transfers in flight, woken by
/// curl_multi_wakeup. It needs nothing but libcurl, so it runs wherever libcurl does (macOS has no epoll);
/// each turn costs in proportion to the transfers in flight, which is why Linux waits in epoll by default.
final class CurlPollLoop: CurlEventLoop {
    private let multi: UnsafeMutableRawPointer
    private var running: Int32 = 0

    /// curl closes its sockets itself and polls only the ones its transfers use: nothing to be told.
    var closeSocket: (callback: fcm_curl_closesocket_callback, context: UnsafeMutableRawPointer)? { nil }

    /// curl_multi_poll never watches an idle connection: curl checks one is alive when it reuses it.
    var parkedSockets: Int { 0 }

    /// Throws when curl could not make the socket pair curl_multi_wakeup writes to (no descriptor left): the
    /// worker would then never be woken early, and every request would wait out a second-long poll.
    init(multi: UnsafeMutableRawPointer) throws {
        self.multi = multi
        // The wake-up is kept, so the worker's first poll returns at once: harmless.
        guard curl_multi_wakeup(multi) == CURLM_OK else { throw DescriptorBudget.startFailure("curl's wake-up socket pair", errno: EMFILE) }
    }

    func wake() {
        // A wake-up before the worker waits is kept (a byte in curl's socket pair): its next poll returns at once.
        _ = curl_multi_wakeup(multi)
    }

    func waitAndPerform(until deadline: ContinuousClock.Instant?, block: Bool) {
        var timeout: Int32 = 1000
        if !block {
            timeout = 0
        } else if let deadline {
            timeout = waitMilliseconds(until: deadline)
        }
        // curl_multi_poll shortens the wait to curl's own next timeout (a connect, a retry, a transfer's
        // limit), so the worker need not track curl's timer as the epoll loop does.
        _ = curl_multi_poll(multi, nil, 0, timeout, nil)
        curl_multi_perform(multi, &running)
    }
}
