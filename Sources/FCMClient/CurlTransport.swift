import CCurl
import Foundation

/// HTTP over libcurl's multi interface: one worker thread drives every transfer, so hundreds of
/// requests can be in flight on a few keep-alive (or HTTP/2 multiplexed) connections without a thread
/// per request. Callers await a continuation that the worker resumes when curl reports completion.
package final class CurlTransport: HTTPTransport, @unchecked Sendable {
    package struct Options: Sendable {
        package var connectTimeout: Duration = .seconds(10)
        package var totalTimeout: Duration = .seconds(60)
        package var maximumResponseBytes = 16 << 20
        /// HTTP/1.1 (the emulator) needs a connection per request in flight; over TLS curl multiplexes
        /// requests on HTTP/2 connections and opens far fewer.
        package var maximumConnectionsPerHost = 64

        package init(maximumConnectionsPerHost: Int = 64) {
            self.maximumConnectionsPerHost = maximumConnectionsPerHost
        }
    }

    private let options: Options
    private let multi: UnsafeMutableRawPointer
    private let lock = NSLock()
    private var pending: [CurlTransfer] = []
    /// Handles whose transfer ended, kept for the next requests (at most `maximumConnectionsPerHost` + 16).
    private var idle: [CurlTransfer] = []
    private var stopping = false
    private var worker: Thread?
    // Owned by the worker thread only.
    private var active: [UnsafeMutableRawPointer: CurlTransfer] = [:]

    package init(options: Options = Options()) {
        CurlGlobal.initialize()
        self.options = options
        guard let multi = curl_multi_init() else { fatalError("curl_multi_init failed: out of memory") }
        self.multi = multi
        _ = fcm_multi_setopt_long(multi, CURLMOPT_PIPELINING, Int(CURLPIPE_MULTIPLEX))
        _ = fcm_multi_setopt_long(multi, CURLMOPT_MAX_HOST_CONNECTIONS, options.maximumConnectionsPerHost)
        let thread = Thread { [unowned self] in self.run() }
        thread.name = "fcmctl-curl"
        worker = thread
        thread.start()
    }

    deinit {
        curl_multi_cleanup(multi)
    }

    /// Stops the worker after failing whatever is still queued; call once when the process is done.
    package func shutdown() {
        lock.lock()
        stopping = true
        lock.unlock()
        curl_multi_wakeup(multi)
        while worker?.isFinished == false { usleep(1000) }
    }

    package func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        let reused = lock.withLock { idle.popLast() }
        let transfer = try reused ?? CurlTransfer(options: options)
        transfer.prepare(request)
        return try await withCheckedThrowingContinuation { continuation in
            transfer.continuation = continuation
            lock.lock()
            let refused = stopping
            // The worker drains the whole queue when it wakes: only the first request queued since then
            // needs to wake it (a write to curl's socket pair per request was a measurable cost).
            let wake = !refused && pending.isEmpty
            if !refused { pending.append(transfer) }
            lock.unlock()
            if refused {
                transfer.finish(.failure(TransportError(url: request.url, message: "the HTTP client was shut down")))
            } else if wake {
                curl_multi_wakeup(multi)
            }
        }
    }

    private func run() {
        var running: Int32 = 0
        while true {
            lock.lock()
            let incoming = pending
            pending.removeAll()
            let stop = stopping
            lock.unlock()
            if stop {
                for transfer in incoming + active.values {
                    transfer.finish(.failure(TransportError(url: transfer.url, message: "the HTTP client was shut down")))
                }
                for handle in active.keys { curl_multi_remove_handle(multi, handle) }
                active.removeAll()
                return
            }
            for transfer in incoming {
                active[transfer.easy] = transfer
                curl_multi_add_handle(multi, transfer.easy)
            }
            curl_multi_perform(multi, &running)
            var queued: Int32 = 0
            while let message = curl_multi_info_read(multi, &queued) {
                guard message.pointee.msg == CURLMSG_DONE, let easy = message.pointee.easy_handle else { continue }
                let code = message.pointee.data.result
                curl_multi_remove_handle(multi, easy)
                if let transfer = active.removeValue(forKey: easy) {
                    transfer.complete(code: code)
                    lock.lock()
                    if idle.count < options.maximumConnectionsPerHost + 16 { idle.append(transfer) }
                    lock.unlock()
                }
            }
            curl_multi_poll(multi, nil, 0, 1000, nil)
        }
    }
}

private enum CurlGlobal {
    // curl_global_init is not thread-safe; a static let runs it exactly once.
    static let once: Void = { curl_global_init(Int(CURL_GLOBAL_DEFAULT)) }()
    static func initialize() { _ = once }
}
