#if os(Linux)
    import CCurl
    import Foundation
    import Glibc
    import Synchronization

    /// curl's multi socket interface on epoll: curl names the sockets to watch and when to call it back, and
    /// the worker hands it only the sockets that are ready. With 512 connections open at 50 ms latency,
    /// polling them all (curl_multi_poll) for every answer cost more than the answers themselves.
    final class CurlEpollLoop: CurlEventLoop {
        private let multi: UnsafeMutableRawPointer
        private let epoll: Int32
        /// An eventfd: a write to it wakes the worker, and any number of writes before it waits cost one read.
        private let wakeup: Int32
        private let capacity = 256
        private let fds: UnsafeMutablePointer<Int32>
        private let flags: UnsafeMutablePointer<Int32>
        private var running: Int32 = 0
        // The rest is the worker's: curl calls the socket, timer and close-socket callbacks from it.
        /// What each socket is registered for in epoll (bit 1: in, bit 2: out).
        private var watched: [Int32: Int32] = [:]
        /// Sockets curl stopped watching (an idle keep-alive connection) but that stay registered for input: most
        /// are wanted again by the next request, which would otherwise pay an epoll add and delete each.
        /// One that turns readable while parked (the server closed it) is taken out; curl finds it dead on reuse.
        private var parked = Set<Int32>() {
            didSet { parkedCount.store(parked.count, ordering: .relaxed) }
        }
        private let parkedCount = Atomic<Int>(0)
        private var timerDue: ContinuousClock.Instant?

        var parkedSockets: Int { parkedCount.load(ordering: .relaxed) }

        var closeSocket: (callback: fcm_curl_closesocket_callback, context: UnsafeMutableRawPointer)? {
            (curlSocketClosed, Unmanaged.passUnretained(self).toOpaque())
        }

        /// Throws when the process has no descriptor left for the epoll instance or the eventfd (`ulimit -n`).
        init(multi: UnsafeMutableRawPointer) throws {
            self.multi = multi
            epoll = epoll_create1(Int32(EPOLL_CLOEXEC))
            guard epoll >= 0 else { throw DescriptorBudget.startFailure("epoll_create1", errno: errno) }
            wakeup = eventfd(0, Int32(EFD_CLOEXEC | EFD_NONBLOCK))
            guard wakeup >= 0 else {
                let code = errno
                close(epoll)
                throw DescriptorBudget.startFailure("eventfd", errno: code)
            }
            fds = .allocate(capacity: capacity)
            flags = .allocate(capacity: capacity)
            _ = fcm_epoll_update(epoll, EPOLL_CTL_ADD, wakeup, 1, 0)
            let me = Unmanaged.passUnretained(self).toOpaque()
            _ = fcm_multi_setopt_socket_callback(multi, curlSocketChanged)
            _ = fcm_multi_setopt_ptr(multi, CURLMOPT_SOCKETDATA, me)
            _ = fcm_multi_setopt_timer_callback(multi, curlTimerChanged)
            _ = fcm_multi_setopt_ptr(multi, CURLMOPT_TIMERDATA, me)
        }

        deinit {
            close(epoll)
            close(wakeup)
            fds.deallocate()
            flags.deallocate()
        }

        func wake() {
            var one: UInt64 = 1
            _ = write(wakeup, &one, 8)
        }

        func waitAndPerform(until deadline: ContinuousClock.Instant?, block: Bool) {
            var timeout: Int32 = 1000
            if !block {
                timeout = 0
            } else if let due = [timerDue, deadline].compactMap({ $0 }).min() {
                timeout = waitMilliseconds(until: due)
            }
            let ready = fcm_epoll_wait(epoll, fds, flags, Int32(capacity), timeout)
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
        Unmanaged<CurlEpollLoop>.fromOpaque(userp).takeUnretainedValue().socketChanged(socket, what)
        return 0
    }

    private let curlSocketClosed: fcm_curl_closesocket_callback = { context, socket in
        if let context { Unmanaged<CurlEpollLoop>.fromOpaque(context).takeUnretainedValue().socketClosed(socket) }
        return close(socket)
    }

    private let curlTimerChanged: fcm_curl_timer_callback = { _, milliseconds, userp in
        guard let userp else { return 0 }
        Unmanaged<CurlEpollLoop>.fromOpaque(userp).takeUnretainedValue().timerChanged(milliseconds)
        return 0
    }
#endif
