import CCurl
import FCMCore
import Foundation

/// HTTP over libcurl's multi interface: one worker thread drives every transfer, so hundreds of requests
/// can be in flight on a few keep-alive (or HTTP/2 multiplexed) connections without a thread per request.
/// Callers await a continuation that the worker resumes when curl reports completion. How the worker waits
/// for curl is its `Loop` (epoll on Linux, curl_multi_poll elsewhere); everything else is the same on both.
package final class CurlTransport: HTTPTransport, TaskExecutor, @unchecked Sendable {
    package struct Options: Sendable {
        package var connectTimeout: Duration = .seconds(10)
        package var totalTimeout: Duration = .seconds(60)
        package var maximumResponseBytes = 16 << 20
        /// HTTP/1.1 (the emulator) needs a connection per request in flight; over TLS curl multiplexes
        /// requests on HTTP/2 connections and opens far fewer.
        package var maximumConnectionsPerHost = 64
        /// Over every host together (nil: no bound): what the open-file limit leaves (`DescriptorBudget`).
        package var maximumTotalConnections: Int?
        package var loop: Loop

        /// `loop` nil: the one this process's `FCMCTL_CURL_LOOP` names (see `Loop.init(environment:)`).
        package init(maximumConnectionsPerHost: Int = 64, loop: Loop? = nil) {
            self.maximumConnectionsPerHost = maximumConnectionsPerHost
            self.loop = loop ?? Loop(environment: ProcessInfo.processInfo.environment)
        }
    }

    private let options: Options
    private let multi: UnsafeMutableRawPointer
    private let events: any CurlEventLoop
    private let lock = NSLock()
    private var pending: [CurlTransfer] = []
    /// Jobs of tasks that prefer this transport as their executor (see `enqueue`).
    private var jobs: [UnownedJob] = []
    private var workerThread: pthread_t?
    private var finished = false
    /// Tasks sleeping on the worker's own clock (`sleep(seconds:)`), in no order: there are a few at most.
    private var sleepers: [(due: ContinuousClock.Instant, continuation: CheckedContinuation<Bool, Never>)] = []
    /// Handles whose transfer ended, kept for the next requests (at most `maximumConnectionsPerHost` + 16).
    private var idle: [CurlTransfer] = []
    private var stopping = false
    private var worker: Thread?
    // Owned by the worker thread only.
    private var active: [UnsafeMutableRawPointer: CurlTransfer] = [:]
    /// No transfer in `active` is due before this (nil: none has a deadline).
    private var nearestDeadline: ContinuousClock.Instant?

    /// The event loop this transport's worker waits in.
    package var loop: Loop { options.loop }

    /// Idle connections whose sockets stay registered (for tests: the worker owns them). Only the epoll loop
    /// keeps any; curl_multi_poll watches the sockets of transfers in flight alone.
    package var parkedSockets: Int { events.parkedSockets }

    /// Throws `DescriptorShortage` when the process has no descriptor left for curl's or the loop's own
    /// (`ulimit -n`): nothing has been sent, and the caller says so.
    package init(options: Options = Options()) throws {
        CurlGlobal.initialize()
        self.options = options
        errno = 0
        guard let multi = curl_multi_init() else {
            throw errno == 0
                ? DescriptorShortage("cannot start the HTTP client: curl_multi_init failed (out of memory)")
                : DescriptorBudget.startFailure("curl_multi_init", errno: errno)
        }
        self.multi = multi
        _ = fcm_multi_setopt_long(multi, CURLMOPT_PIPELINING, Int(CURLPIPE_MULTIPLEX))
        _ = fcm_multi_setopt_long(multi, CURLMOPT_MAX_HOST_CONNECTIONS, options.maximumConnectionsPerHost)
        // curl's own cache holds four connections per handle added at the moment: whenever few requests
        // were in flight (between phases, at the tail of a wave) it closed the others, and the next wave
        // opened them again (352 connections for 22,000 requests at 32 in flight).
        var cached = options.maximumConnectionsPerHost + 16
        if let total = options.maximumTotalConnections {
            _ = fcm_multi_setopt_long(multi, CURLMOPT_MAX_TOTAL_CONNECTIONS, total)
            cached = min(cached, total)
        }
        _ = fcm_multi_setopt_long(multi, CURLMOPT_MAXCONNECTS, cached)
        do {
            switch options.loop {
            #if os(Linux)
                case .epoll: events = try CurlEpollLoop(multi: multi)
            #endif
            case .poll: events = try CurlPollLoop(multi: multi)
            }
        } catch {
            curl_multi_cleanup(multi)
            throw error
        }
        // Unowned: a transport nobody shuts down must still go away with its last reference, or its idle
        // keep-alive connections would hold servers open. Owners shut it down before they let go (the GCS
        // store through `TransportLifetime`, connections through their `shutdown`).
        let thread = Thread { [unowned self] in self.run() }
        thread.name = "fcmctl-curl"
        worker = thread
        thread.start()
    }

    deinit {
        // Before `events` goes: closing the connections calls its socket callbacks.
        curl_multi_cleanup(multi)
    }

    private func wake() { events.wake() }

    /// Stops the worker after failing whatever is still queued; call once when the process is done.
    package func shutdown() {
        lock.lock()
        stopping = true
        lock.unlock()
        wake()
        // Called from a job on the worker itself, it cannot wait for the worker: the loop stops after this job.
        if lock.withLock({ onWorker }) { return }
        while worker?.isFinished == false { usleep(1000) }
    }

    package func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        // A header is one line: a name or value with CR or LF (an access token, or a credentials file's
        // `credential_source.headers`, from an answer or a file fcmctl does not control) would add headers of
        // its own to the request. Refused here, the one place every request passes, before anything is sent.
        if let (name, _) = request.headers.first(where: { Self.breaksLine($0.0) || Self.breaksLine($0.1) }) {
            throw UnsendableRequest(
                "a request to \(request.url) was not sent: its header \(Self.breaksLine(name) ? "name" : name) holds a line break (CR, LF or NUL), "
                    + "which would add headers of its own; check the credentials file and what the token endpoint answered")
        }
        // curl fails a request head over 1 MiB before sending it (CURLE_OUT_OF_MEMORY), and with libcurl 7.88
        // the retry then waited for that connection for ever; headers that large are no request fcmctl makes.
        let headerBytes = request.headers.reduce(0) { $0 + $1.0.utf8.count + $1.1.utf8.count + 4 }
        if headerBytes > Self.maximumHeaderBytes {
            throw UnsendableRequest(
                "a request to \(TransportError.redactedURL(request.url)) was not sent: its headers hold \(headerBytes) bytes, over the "
                    + "\(Self.maximumHeaderBytes) fcmctl sends; check the credentials file's headers and the access token")
        }
        let reused = lock.withLock { idle.popLast() }
        let transfer: CurlTransfer
        if let reused {
            transfer = reused
        } else {
            let closeSocket = events.closeSocket
            transfer = try CurlTransfer(options: options, onClose: closeSocket?.callback, closeContext: closeSocket?.context)
        }
        transfer.prepare(request)
        // Unchecked: `CurlTransfer.finish` resumes it exactly once and lets go of it, and the checked kind cost an
        // allocation of its own per request.
        return try await withUnsafeThrowingContinuation { continuation in
            transfer.continuation = continuation
            lock.lock()
            let refused = stopping
            // The worker drains the whole queue when it wakes: only the first request queued since then
            // needs to wake it (a write to curl's socket pair per request was a measurable cost), and none
            // queued by the worker itself, running a task's job.
            let wake = !refused && pending.isEmpty && jobs.isEmpty && !onWorker
            if !refused { pending.append(transfer) }
            lock.unlock()
            if refused {
                transfer.finish(.failure(TransportError(url: request.url, message: "the HTTP client was shut down")))
            } else if wake {
                self.wake()
            }
        }
    }

    /// A quarter of curl's 1 MiB for the whole request head, which also holds the URL and a small body.
    static let maximumHeaderBytes = 256 << 10

    static func breaksLine(_ text: String) -> Bool { text.utf8.contains { $0 == 0x0D || $0 == 0x0A || $0 == 0x00 } }

    private var onWorker: Bool {
        guard let workerThread else { return false }
        return pthread_equal(pthread_self(), workerThread) != 0
    }

    /// A task that prefers this transport as its executor (`withTaskExecutorPreference`) runs on the worker
    /// thread, between curl's events: an answer resumes its request where curl finished it, without handing
    /// it to another thread and waking that thread, which cost more than the request itself.
    package func enqueue(_ job: consuming ExecutorJob) {
        let unowned = UnownedJob(job)
        lock.lock()
        if finished {
            lock.unlock()
            globalConcurrentExecutor.enqueue(ExecutorJob(unowned))
            return
        }
        let wake = pending.isEmpty && jobs.isEmpty && !onWorker
        jobs.append(unowned)
        lock.unlock()
        if wake { self.wake() }
    }

    /// Sleeps on the worker's loop: the paced requests' sleeper wakes there, and the requests it releases go
    /// out from there, with no timer thread and no other thread woken at each tick.
    package func sleep(seconds: Double) async {
        guard seconds > 0 else { return }
        let due = ContinuousClock.now + .nanoseconds(Int64(seconds * 1e9))
        let queued: Bool = await withCheckedContinuation { continuation in
            lock.lock()
            if stopping || finished {
                lock.unlock()
                continuation.resume(returning: false)
                return
            }
            let wake = !onWorker && sleepers.allSatisfy { $0.due > due } && pending.isEmpty && jobs.isEmpty
            sleepers.append((due, continuation))
            lock.unlock()
            if wake { self.wake() }
        }
        if !queued { try? await Task.sleep(for: .nanoseconds(Int64(seconds * 1e9))) }
    }

    /// Ends every sleep now: the run is stopping, and a retry that would have waited seconds should learn it
    /// at once. Sleepers that still have a reason to wait (the rate limiter's) find their time not yet come
    /// and sleep again.
    package func wakeAllSleepers() {
        lock.lock()
        let all = sleepers
        sleepers.removeAll()
        lock.unlock()
        for sleeper in all { sleeper.continuation.resume(returning: true) }
    }

    /// Resumes the sleepers that are due; returns when the next one is.
    private func wakeSleepers() -> ContinuousClock.Instant? {
        let now = ContinuousClock.now
        lock.lock()
        var due: [(due: ContinuousClock.Instant, continuation: CheckedContinuation<Bool, Never>)] = []
        var next: ContinuousClock.Instant?
        sleepers.removeAll { sleeper in
            if sleeper.due <= now {
                due.append(sleeper)
                return true
            }
            next = next.map { min($0, sleeper.due) } ?? sleeper.due
            return false
        }
        lock.unlock()
        // In the order they were due, should a late turn of the loop find several.
        for sleeper in due.sorted(by: { $0.due < $1.due }) { sleeper.continuation.resume(returning: true) }
        return next
    }

    private func run() {
        lock.withLock { workerThread = pthread_self() }
        let executor = asUnownedTaskExecutor()
        while true {
            lock.lock()
            var runnable = jobs
            jobs.removeAll()
            lock.unlock()
            // Jobs run before the requests they queued are handed to curl, and those queue more jobs only when
            // answers come: this loop ends.
            while !runnable.isEmpty {
                for job in runnable { job.runSynchronously(on: executor) }
                lock.lock()
                runnable = jobs
                jobs.removeAll()
                lock.unlock()
            }
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
                // Jobs that come after the worker are run by the global executor; sleepers sleep elsewhere.
                lock.lock()
                finished = true
                let left = jobs
                jobs.removeAll()
                let sleeping = sleepers
                sleepers.removeAll()
                lock.unlock()
                for sleeper in sleeping { sleeper.continuation.resume(returning: false) }
                for job in left { globalConcurrentExecutor.enqueue(ExecutorJob(job)) }
                return
            }
            for transfer in incoming {
                // Checked here, the last moment before curl writes it: the process may have been stopped since.
                if let notAfter = transfer.notAfter, StateLock.now() > notAfter {
                    transfer.finish(.failure(TransportError(url: transfer.url, message: "not sent: the state lock's lease window passed")))
                    continue
                }
                let deadline = ContinuousClock.now + .milliseconds(transfer.timeoutMilliseconds)
                transfer.deadline = deadline
                nearestDeadline = min(nearestDeadline ?? deadline, deadline)
                active[transfer.easy] = transfer
                curl_multi_add_handle(multi, transfer.easy)
            }
            let sleeperDue = wakeSleepers()
            let busy = lock.withLock { !jobs.isEmpty || !pending.isEmpty }
            // Without an array: this runs at every turn of the loop.
            var due = sleeperDue
            if let nearestDeadline { due = min(due ?? nearestDeadline, nearestDeadline) }
            events.waitAndPerform(until: due, block: !busy)
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
            if let nearestDeadline, nearestDeadline <= ContinuousClock.now { expireOverdue() }
        }
    }

    /// Fails the transfers whose deadline passed, which curl would otherwise keep: libcurl before 8.8 never
    /// times out a transfer waiting for a connection (curl/curl#13227, fixed by curl/curl#13276). One that
    /// failed before sending (a request head over curl's 1 MiB) left its connection's multiplexing unknown, and
    /// the retry, told to wait for that (CURLOPT_PIPEWAIT), waited for ever. Runs only when a deadline is due.
    private func expireOverdue() {
        let now = ContinuousClock.now
        var next: ContinuousClock.Instant?
        for (easy, transfer) in active {
            guard let deadline = transfer.deadline else { continue }
            if deadline > now {
                next = min(next ?? deadline, deadline)
                continue
            }
            curl_multi_remove_handle(multi, easy)
            active[easy] = nil
            // Not kept for reuse: curl gave it up half-way, and a fresh handle costs little on this rare path.
            transfer.expire()
        }
        nearestDeadline = next
    }
}

private enum CurlGlobal {
    // curl_global_init is not thread-safe; a static let runs it exactly once.
    static let once: Void = { curl_global_init(Int(CURL_GLOBAL_DEFAULT)) }()
    static func initialize() { _ = once }
}
