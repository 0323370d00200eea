import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// How many HTTP connections fit under the process's open-file limit (`ulimit -n`). Every connection is a
/// descriptor; with the limit at 64 and `--parallelism 512`, the connections took every descriptor and the
/// state file could then not be opened. A transport is given at most what is left after `reserved`, and a
/// limit too low for even `minimumConnections` is refused before anything starts, saying how to raise it.
package enum DescriptorBudget {
    /// Descriptors left for everything but the FCM transport's connections: standard streams, the runtime's
    /// own, two transports' wake-up and epoll descriptors, the state, journal and lock files, name lookups,
    /// and the GCS state store's connections (8 at most).
    package static let reserved = 32
    package static let minimumConnections = 4

    /// Below this the runtime itself cannot start: libdispatch stops the process with SIGILL when it gets no
    /// eventfd (measured: `ulimit -n 5` trapped, 6 did not), before any command has run.
    package static let processMinimum = 16

    /// The message `main` prints and exits 1 with, before anything else runs, when the limit is below
    /// `processMinimum`; nil otherwise.
    package static var processShortage: String? {
        guard let limit = openFileLimit, limit < processMinimum else { return nil }
        return "the open-file limit is \(limit) (ulimit -n), too low for fcmctl to start: it needs \(processMinimum), and "
            + "\(reserved + minimumConnections) to talk to FCM; raise it, e.g. `ulimit -n 1024`"
    }

    /// The soft open-file limit, nil when there is none (RLIM_INFINITY, or past any count of descriptors).
    package static var openFileLimit: Int? {
        var limit = rlimit()
        #if os(Linux)
            let resource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
        #else
            let resource = RLIMIT_NOFILE
        #endif
        guard getrlimit(resource, &limit) == 0, limit.rlim_cur < rlim_t(Int32.max) else { return nil }
        return Int(limit.rlim_cur)
    }

    /// `wanted` connections, or as many as fit under `limit`; throws when fewer than `minimumConnections` fit.
    package static func connections(wanted: Int, limit: Int? = DescriptorBudget.openFileLimit) throws -> Int {
        guard let limit else { return wanted }
        let fitting = limit - reserved
        guard fitting >= minimumConnections else {
            throw DescriptorShortage(
                "the open-file limit is \(limit) (ulimit -n), too low for fcmctl, which needs at least \(reserved + minimumConnections) "
                    + "(its HTTP connections, state files and the runtime's own); raise it, e.g. `ulimit -n 1024`")
        }
        return min(wanted, fitting)
    }

    /// The error for a system call that could not give the transport a descriptor it needs to start.
    static func startFailure(_ call: String, errno code: Int32) -> DescriptorShortage {
        let reason = String(cString: strerror(code))
        if code == EMFILE || code == ENFILE {
            let limit = openFileLimit.map { " (ulimit -n is \($0))" } ?? ""
            return DescriptorShortage(
                "cannot start the HTTP client: \(call) failed: \(reason) (\(code == EMFILE ? "EMFILE" : "ENFILE")); the process ran out of "
                    + "file descriptors\(limit): raise the open-file limit, e.g. `ulimit -n 1024`")
        }
        return DescriptorShortage("cannot start the HTTP client: \(call) failed: \(reason)")
    }
}

/// The process cannot have the descriptors a transport needs: nothing was sent.
package struct DescriptorShortage: Error, Sendable, CustomStringConvertible {
    package var description: String
    init(_ description: String) { self.description = description }
}
