import FCMCore
import Foundation
import Synchronization

/// SIGINT and SIGTERM, which a CI runner sends when a job is cancelled.
///
/// While an apply is sending (`draining`), the first signal stops it the way a lost lock does: nothing new is
/// sent, what is on the wire is seen through, the state is written, the lock released, and the run exits
/// 128 + the signal (130, 143) saying what was done and what was not. At any other moment (a refresh, a plan,
/// a prompt) nothing is in flight whose answer matters: the locks this process holds are released and it
/// exits at once. A second signal always exits at once; the journal holds every completed operation.
///
/// Installed by `main` only: commands run inside tests keep the test runner's own handling.
package enum Interruption {
    /// How long a stopping apply may take to see its requests on the wire answered; then it exits without
    /// the final state write (the journal has every record) rather than outstay a runner's kill timeout.
    static let drainSeconds = 5.0
    /// How long the final state write and unlock may take after that.
    static let finishSeconds = 4.0
    /// How long releasing the locks may take on the way out.
    static let unlockSeconds = 2.0

    struct Held {
        var store: any StateStore
        var lock: StateLock
    }

    enum Phase {
        case idle
        /// An apply is sending: a signal stops it through this.
        case draining(StopSignal)
        /// The apply stopped sending and writes its state.
        case finishing
    }

    struct Registry {
        var received: Int32?
        var phase = Phase.idle
        var held: [Int: Held] = [:]
        var nextToken = 0
        /// Lock requests under way: a signal during one waits for its lock to be registered, then releases it.
        var acquiring = 0
    }

    static let registry = Mutex(Registry())
    /// Kept only so the sources live as long as the process; written once, by `install` before any command runs.
    nonisolated(unsafe) private static var sources: [any DispatchSourceSignal] = []
    static let queue = DispatchQueue(label: "fcmctl.signals")

    package static func install() {
        for number in [SIGINT, SIGTERM] {
            // The default action would end the process before any handler ran.
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            // Two signals in quick succession arrive as one event with a count of two: the second still means "now".
            source.setEventHandler { for _ in 0..<min(2, max(1, source.data)) { received(number) } }
            source.resume()
            sources.append(source)
        }
    }

    static func name(_ number: Int32) -> String { number == SIGINT ? "SIGINT" : number == SIGTERM ? "SIGTERM" : "signal \(number)" }

    /// A lock this process holds, to release if a signal ends it early. Returns the token for `released`.
    static func holding(_ lock: StateLock, in store: any StateStore) -> Int {
        registry.withLock { registry in
            registry.nextToken += 1
            registry.held[registry.nextToken] = Held(store: store, lock: lock)
            return registry.nextToken
        }
    }

    static func released(_ token: Int) { _ = registry.withLock { registry in registry.held.removeValue(forKey: token) } }

    /// A lock is being taken: a signal now would find it created but not yet `holding`.
    static func acquiring(_ started: Bool) { registry.withLock { registry in registry.acquiring += started ? 1 : -1 } }

    /// The signal that came while a lock was being taken, if one did: the caller releases that lock and calls
    /// `exitInterrupted`.
    static var receivedWhileIdle: Int32? {
        registry.withLock { registry in
            guard case .idle = registry.phase else { return nil }
            return registry.received
        }
    }

    static func exitInterrupted(_ number: Int32) -> Never {
        say("fcmctl: interrupted by \(name(number)); the state lock was released.")
        flushAndExit(128 + number)
    }

    /// From now until `finished`, a first signal stops the apply through `stop` instead of ending the process.
    static func draining(_ stop: StopSignal) {
        let early: Int32? = registry.withLock { registry in
            registry.phase = .draining(stop)
            return registry.received
        }
        // A signal whose handler is still on its way out: stop before the first request.
        if let early { stop.request("interrupted by \(name(early))", exitCode: 128 + early) }
    }

    /// The apply sent its last request; it writes its state now.
    static func sendingEnded() {
        registry.withLock { registry in if case .draining = registry.phase { registry.phase = .finishing } }
    }

    static func finished() { registry.withLock { registry in registry.phase = .idle } }
}
