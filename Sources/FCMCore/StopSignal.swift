import Foundation
import Synchronization

/// A request to stop sending: a signal (SIGINT, SIGTERM) or `--timeout`. Whoever sends checks it before
/// each request; whoever waits (the rate limiter, retry sleeps) is told at once through `onRequest`, so a
/// stopped run drains in the time its requests on the wire take, not in the time their waits were booked for.
package final class StopSignal: Sendable {
    private struct State {
        var stored: (reason: String, exitCode: Int32)?
        var observers: [@Sendable () -> Void] = []
    }

    private let state = Mutex(State())

    package init() {}

    /// Why the run was stopped, for a person: "interrupted by SIGTERM".
    package var reason: String? { state.withLock { $0.stored?.reason } }
    /// The exit code the run ends with because of it.
    package var exitCode: Int32? { state.withLock { $0.stored?.exitCode } }
    package var isRequested: Bool { state.withLock { $0.stored != nil } }

    /// Returns false if a stop was already requested (the first reason stands).
    @discardableResult
    package func request(_ reason: String, exitCode: Int32) -> Bool {
        let toRun: [@Sendable () -> Void]? = state.withLock { state in
            guard state.stored == nil else { return nil }
            state.stored = (reason, exitCode)
            defer { state.observers = [] }
            return state.observers
        }
        guard let toRun else { return false }
        for observer in toRun { observer() }
        return true
    }

    /// Runs `action` when a stop is requested (at once if it already was).
    package func onRequest(_ action: @escaping @Sendable () -> Void) {
        let now: Bool = state.withLock { state in
            guard state.stored == nil else { return true }
            state.observers.append(action)
            return false
        }
        if now { action() }
    }
}

/// A request that was never sent because the run was stopped first: not attempted, and FCM unchanged.
package struct StoppedBeforeSending: Error, Sendable {
    package var reason: String

    package init(reason: String) { self.reason = reason }

}
