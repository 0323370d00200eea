import CCurl
import Foundation
import Synchronization

/// HTTP over libcurl's multi socket interface: one worker thread drives every transfer, so hundreds of
/// requests can be in flight on a few keep-alive (or HTTP/2 multiplexed) connections without a thread
/// per request. Callers await a continuation that the worker resumes when curl reports completion.
///
/// The worker waits in epoll on the sockets curl names and acts on the ones that are ready: with 512
/// connections open at 50 ms latency, polling them all (curl_multi_poll) for every answer cost more than
/// the answers themselves.
package final class CurlTransport: HTTPTransport, TaskExecutor, @unchecked Sendable {
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
    private let epoll: Int32
    /// Written to wake the worker when requests are queued or the transport shuts down.
    private let wakeup: Int32
    // Owned by the worker thread only (curl calls the socket and timer callbacks from it).
    private var active: [UnsafeMutableRawPointer: CurlTransfer] = [:]
    /// What each socket is registered for in epoll (bit 1: in, bit 2: out).
    private var watched: [Int32: Int32] = [:]
    /// Sockets curl stopped watching (an idle keep-alive connection) but that stay registered for input: most
    /// are wanted again by the next request, and an add and a delete per request were a twentieth of the CPU.
    /// One that turns readable while parked (the server closed it) is taken out; curl finds it dead on reuse.
    private var parked = Set<Int32>() {
        didSet { parkedCount.store(parked.count, ordering: .relaxed) }
    }
    private let parkedCount = Atomic<Int>(0)

    /// Idle connections whose sockets stay registered (for tests: the worker owns `parked`).
    package var parkedSockets: Int { parkedCount.load(ordering: .relaxed) }
    private var timerDue: ContinuousClock.Instant?

    package init(options: Options = Options()) {
        CurlGlobal.initialize()
        self.options = options
        guard let multi = curl_multi_init() else { fatalError("curl_multi_init failed: out of memory") }
        self.multi = multi
        _ = fcm_multi_setopt_long(multi, CURLMOPT_PIPELINING, Int(CURLPIPE_MULTIPLEX))
        _ = fcm_multi_setopt_long(multi, CURLMOPT_MAX_HOST_CONNECTIONS, options.maximumConnectionsPerHost)
        // curl's own cache holds four connections per handle added at the moment: whenever few requests
        // were in flight (between phases, at the tail of a wave) it closed the others, and the next wave
        // opened them again (352 connections for 22,000 requests at 32 in flight).
        _ = fcm_multi_setopt_long(multi, CURLMOPT_MAXCONNECTS, options.maximumConnectionsPerHost + 16)
        epoll = epoll_create1(Int32(EPOLL_CLOEXEC))
        wakeup = eventfd(0, Int32(EFD_CLOEXEC | EFD_NONBLOCK))
        guard epoll >= 0, wakeup >= 0 else { fatalError("epoll_create1 or eventfd failed: \(String(cString: strerror(errno)))") }
        _ = fcm_epoll_update(epoll, EPOLL_CTL_ADD, wakeup, 1, 0)
        let me = Unmanaged.passUnretained(self).toOpaque()
        _ = fcm_multi_setopt_socket_callback(multi, curlSocketChanged)
        _ = fcm_multi_setopt_ptr(multi, CURLMOPT_SOCKETDATA, me)
        _ = fcm_multi_setopt_timer_callback(multi, curlTimerChanged)
        _ = fcm_multi_setopt_ptr(multi, CURLMOPT_TIMERDATA, me)
        let thread = Thread { [unowned self] in self.run() }
        thread.name = "fcmctl-curl"
        worker = thread
        thread.start()
    }

    deinit {
        curl_multi_cleanup(multi)
        close(epoll)
        close(wakeup)
    }

    private func wake() {
        var one: UInt64 = 1
        _ = write(wakeup, &one, 8)
    }

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
        let reused = lock.withLock { idle.popLast() }
        let transfer =
            try reused ?? CurlTransfer(options: options, onClose: curlSocketClosed, closeContext: Unmanaged.passUnretained(self).toOpaque())
        transfer.prepare(request)
        return try await withCheckedThrowingContinuation { continuation in
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
        var running: Int32 = 0
        var fds = [Int32](repeating: 0, count: 256)
        var flags = [Int32](repeating: 0, count: 256)
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
                active[transfer.easy] = transfer
                curl_multi_add_handle(multi, transfer.easy)
            }
            var timeout: Int32 = 1000
            let sleeperDue = wakeSleepers()
            if lock.withLock({ !jobs.isEmpty || !pending.isEmpty }) {
                timeout = 0
            } else if let due = [timerDue, sleeperDue].compactMap({ $0 }).min() {
                let left = ContinuousClock.now.duration(to: due)
                timeout =
                    left <= .zero ? 0 : Int32(min(1000, left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000 + 1))
            }
            let ready = fcm_epoll_wait(epoll, &fds, &flags, Int32(fds.count), timeout)
            for index in 0..<max(0, Int(ready)) {
                if fds[index] == wakeup {
                    var count: UInt64 = 0
                    _ = read(wakeup, &count, 8)
                    continue
                }
                if parked.contains(fds[index]) {
                    unwatch(fds[index])
                    continue
                }
                curl_multi_socket_action(multi, fds[index], flags[index], &running)
            }
            if let timerDue, timerDue <= ContinuousClock.now {
                // One-shot: curl sets the next timeout from inside this call if it needs one.
                self.timerDue = nil
                fcm_multi_socket_timeout(multi, &running)
            }
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
        }
    }

    /// curl wants `socket` watched for `what` (CURL_POLL_IN, _OUT, _INOUT) or no longer (CURL_POLL_REMOVE).
    fileprivate func socketChanged(_ socket: Int32, _ what: Int32) {
        if what == CURL_POLL_REMOVE {
            // Registered for input only, it can wait for its next request as it is (see `parked`); registered for
            // output it would wake the loop at every turn.
            if watched[socket] == 1 {
                parked.insert(socket)
            } else {
                unwatch(socket)
            }
            return
        }
        parked.remove(socket)
        let input: Int32 = what == CURL_POLL_IN || what == CURL_POLL_INOUT ? 1 : 0
        let output: Int32 = what == CURL_POLL_OUT || what == CURL_POLL_INOUT ? 1 : 0
        let wanted = input | output << 1
        let registered = watched[socket]
        if registered == wanted { return }
        // ADD and MOD fall back on each other, should a descriptor ever be closed without the callback.
        let first = registered == nil ? EPOLL_CTL_ADD : EPOLL_CTL_MOD
        if fcm_epoll_update(epoll, first, socket, input, output) != 0 {
            _ = fcm_epoll_update(epoll, first == EPOLL_CTL_ADD ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, socket, input, output)
        }
        watched[socket] = wanted
    }

    private func unwatch(_ socket: Int32) {
        _ = fcm_epoll_update(epoll, EPOLL_CTL_DEL, socket, 0, 0)
        watched[socket] = nil
        parked.remove(socket)
    }

    /// curl closes `socket`: a closed descriptor leaves epoll by itself, and its number may be handed out again.
    fileprivate func socketClosed(_ socket: Int32) {
        watched[socket] = nil
        parked.remove(socket)
    }

    /// curl wants to be called back in `milliseconds` (-1: never).
    fileprivate func timerChanged(_ milliseconds: Int) {
        timerDue = milliseconds < 0 ? nil : ContinuousClock.now + .milliseconds(milliseconds)
    }
}

private let curlSocketChanged: fcm_curl_socket_callback = { _, socket, what, userp, _ in
    guard let userp else { return 0 }
    Unmanaged<CurlTransport>.fromOpaque(userp).takeUnretainedValue().socketChanged(socket, what)
    return 0
}

private let curlSocketClosed: fcm_curl_closesocket_callback = { context, socket in
    if let context { Unmanaged<CurlTransport>.fromOpaque(context).takeUnretainedValue().socketClosed(socket) }
    return close(socket)
}

private let curlTimerChanged: fcm_curl_timer_callback = { _, milliseconds, userp in
    guard let userp else { return 0 }
    Unmanaged<CurlTransport>.fromOpaque(userp).takeUnretainedValue().timerChanged(milliseconds)
    return 0
}

private enum CurlGlobal {
    // curl_global_init is not thread-safe; a static let runs it exactly once.
    static let once: Void = { curl_global_init(Int(CURL_GLOBAL_DEFAULT)) }()
    static func initialize() { _ = once }
}
