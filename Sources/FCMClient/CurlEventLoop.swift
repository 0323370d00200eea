import CCurl
import FCMCore
import Foundation

/// How the transport's worker waits for curl and is woken: the worker owns the queues, jobs and sleepers,
/// and asks its loop only to wait until something is due and to let curl act on what is ready.
protocol CurlEventLoop: AnyObject {
    /// Any thread: the worker's current wait returns, or its next one does not block.
    func wake()

    /// Worker only. Waits until curl has something to do, `wake` is called or `deadline` passes (nil: nothing
    /// of the worker's own is due), at most a second, then lets curl move every transfer that can move:
    /// those that finished are then in `curl_multi_info_read`. `block` false: look, but do not wait.
    func waitAndPerform(until deadline: ContinuousClock.Instant?, block: Bool)

    /// The close-socket callback every easy handle needs, if this loop must know when curl closes a socket.
    var closeSocket: (callback: fcm_curl_closesocket_callback, context: UnsafeMutableRawPointer)? { get }

    /// Idle connections whose sockets stay watched between requests.
    var parkedSockets: Int { get }
}

extension CurlTransport {
    /// Which event loop drives curl. Linux has both: epoll costs per socket event, curl_multi_poll per
    /// transfer in flight at every turn, which counts at hundreds in flight. Elsewhere only curl's own.
    package enum Loop: String, Sendable, CaseIterable, CustomStringConvertible {
        #if os(Linux)
            /// curl's multi socket interface, waited on in epoll and woken by an eventfd.
            case epoll
        #endif
        /// curl_multi_poll, woken by curl_multi_wakeup: libcurl alone, so it runs wherever libcurl does.
        case poll

        package static var platformDefault: Loop {
            #if os(Linux)
                .epoll
            #else
                .poll
            #endif
        }

        /// `FCMCTL_CURL_LOOP` (`epoll`, `poll`); unset, or a loop this platform lacks, is the platform's default.
        package init(environment: [String: String]) {
            self = environment["FCMCTL_CURL_LOOP"].flatMap { Loop(rawValue: $0.lowercased()) } ?? .platformDefault
        }

        package var description: String { rawValue }
    }
}

/// How long to wait for `due`, in epoll's and curl_multi_poll's milliseconds: rounded up, so the loop does
/// not wake a moment early and turn again for nothing; at most a second, so a missed wake-up costs no more.
func waitMilliseconds(until due: ContinuousClock.Instant) -> Int32 {
    let left = ContinuousClock.now.duration(to: due)
    return Int32(min(1000, left.millisecondsRoundedUp))
}
