import FCMCore
import Foundation

/// What the process's signal handling needs to know of a run: which lock it holds (a signal that ends the
/// process releases it), and when an apply is sending (a signal then stops the sending instead). Commands
/// pass the process's handler; tests and library use pass `none`.
package struct SignalHooks: Sendable {
    package var acquiring: @Sendable (_ started: Bool) -> Void
    package var holding: @Sendable (_ lock: StateLock, _ store: any StateStore) -> Int
    package var released: @Sendable (_ token: Int) -> Void
    /// A signal that arrived while the lock was being taken: the run releases it and ends with this code.
    package var receivedWhileIdle: @Sendable () -> Int32?
    package var exitInterrupted: @Sendable (_ signal: Int32) -> Never
    package var draining: @Sendable (_ stop: StopSignal) -> Void
    package var sendingEnded: @Sendable () -> Void
    package var finished: @Sendable () -> Void

    package init(
        acquiring: @escaping @Sendable (Bool) -> Void, holding: @escaping @Sendable (StateLock, any StateStore) -> Int,
        released: @escaping @Sendable (Int) -> Void, receivedWhileIdle: @escaping @Sendable () -> Int32?,
        exitInterrupted: @escaping @Sendable (Int32) -> Never, draining: @escaping @Sendable (StopSignal) -> Void,
        sendingEnded: @escaping @Sendable () -> Void, finished: @escaping @Sendable () -> Void
    ) {
        self.acquiring = acquiring
        self.holding = holding
        self.released = released
        self.receivedWhileIdle = receivedWhileIdle
        self.exitInterrupted = exitInterrupted
        self.draining = draining
        self.sendingEnded = sendingEnded
        self.finished = finished
    }

    package static let none = SignalHooks(
        acquiring: { _ in }, holding: { _, _ in 0 }, released: { _ in }, receivedWhileIdle: { nil }, exitInterrupted: { exit($0) },
        draining: { _ in }, sendingEnded: {}, finished: {})
}
