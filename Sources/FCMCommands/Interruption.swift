import Dispatch
import FCMCore
import FCMEngine
import FCMViews
import Foundation

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

    private struct Held {
        var store: any StateStore
        var lock: StateLock
    }

    private enum Phase {
        case idle
        /// An apply is sending: a signal stops it through this.
        case draining(StopSignal)
        /// The apply stopped sending and writes its state.
        case finishing
    }

    private final class Registry: @unchecked Sendable {
        let lock = NSLock()
        var received: Int32?
        var phase = Phase.idle
        var held: [Int: Held] = [:]
        var nextToken = 0
        /// Lock requests under way: a signal during one waits for its lock to be registered, then releases it.
        var acquiring = 0
        var sources: [any DispatchSourceSignal] = []
    }

    private static let registry = Registry()
    private static let queue = DispatchQueue(label: "fcmctl.signals")

    package static func install() {
        for number in [SIGINT, SIGTERM] {
            // The default action would end the process before any handler ran.
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            // Two signals in quick succession arrive as one event with a count of two: the second still means "now".
            source.setEventHandler { for _ in 0..<min(2, max(1, source.data)) { received(number) } }
            source.resume()
            registry.lock.withLock { registry.sources.append(source) }
        }
    }

    static func name(_ number: Int32) -> String { number == SIGINT ? "SIGINT" : number == SIGTERM ? "SIGTERM" : "signal \(number)" }

    /// A lock this process holds, to release if a signal ends it early. Returns the token for `released`.
    static func holding(_ lock: StateLock, in store: any StateStore) -> Int {
        registry.lock.withLock {
            registry.nextToken += 1
            registry.held[registry.nextToken] = Held(store: store, lock: lock)
            return registry.nextToken
        }
    }

    static func released(_ token: Int) { _ = registry.lock.withLock { registry.held.removeValue(forKey: token) } }

    /// A lock is being taken: a signal now would find it created but not yet `holding`.
    static func acquiring(_ started: Bool) { registry.lock.withLock { registry.acquiring += started ? 1 : -1 } }

    /// The signal that came while a lock was being taken, if one did: the caller releases that lock and calls
    /// `exitInterrupted`.
    static var receivedWhileIdle: Int32? {
        registry.lock.withLock {
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
        let early: Int32? = registry.lock.withLock {
            registry.phase = .draining(stop)
            return registry.received
        }
        // A signal whose handler is still on its way out: stop before the first request.
        if let early { stop.request("interrupted by \(name(early))", exitCode: 128 + early) }
    }

    /// The apply sent its last request; it writes its state now.
    static func sendingEnded() {
        registry.lock.withLock { if case .draining = registry.phase { registry.phase = .finishing } }
    }

    static func finished() { registry.lock.withLock { registry.phase = .idle } }

    private static func received(_ number: Int32) {
        let code = 128 + number
        let (first, phase): (Bool, Phase) = registry.lock.withLock {
            defer { if registry.received == nil { registry.received = number } }
            return (registry.received == nil, registry.phase)
        }
        guard first else {
            say("fcmctl: \(name(number)) again: exiting now. Every completed operation is in the journal; the next run folds it in.")
            flushAndExit(code)
        }
        switch phase {
        case .draining(let stop):
            say(
                "fcmctl: \(name(number)) received: sending nothing more; waiting up to \(Int(drainSeconds)) s for the requests in flight, "
                    + "then writing the state and releasing the lock (\(name(number)) again exits at once).")
            stop.request("interrupted by \(name(number))", exitCode: code)
            queue.asyncAfter(deadline: .now() + drainSeconds) { overdue(number, finishing: false) }
        case .finishing:
            say("fcmctl: \(name(number)) received: writing the state and releasing the lock (\(name(number)) again exits at once).")
            queue.asyncAfter(deadline: .now() + finishSeconds) { overdue(number, finishing: true) }
        case .idle:
            if registry.lock.withLock({ registry.acquiring > 0 }) {
                // The lock being taken releases itself once it is held (`withStateLock`); should taking it hang
                // (waiting on another run), this ends the wait.
                queue.asyncAfter(deadline: .now() + unlockSeconds) {
                    let released = releaseLocks()
                    say("fcmctl: interrupted by \(name(number))\(released > 0 ? "; the state lock was released" : "").")
                    flushAndExit(code)
                }
                return
            }
            let released = releaseLocks()
            say("fcmctl: interrupted by \(name(number))\(released > 0 ? "; the state lock was released" : "").")
            flushAndExit(code)
        }
    }

    /// The stopping apply did not get this far in time: exit, as a second signal would, releasing the locks.
    private static func overdue(_ number: Int32, finishing: Bool) {
        let phase = registry.lock.withLock { registry.phase }
        switch phase {
        case .idle:
            return
        case .finishing where !finishing:
            queue.asyncAfter(deadline: .now() + finishSeconds) { overdue(number, finishing: true) }
            return
        case .draining, .finishing:
            break
        }
        let waited = finishing ? "the state write" : "the requests in flight"
        let released = releaseLocks()
        say(
            "fcmctl: \(waited) did not end in time after \(name(number)): exiting now\(released > 0 ? " (the state lock was released)" : ""). "
                + "Every completed operation is in the journal; the next run folds it in.")
        flushAndExit(128 + number)
    }

    /// Releases every lock this process holds, waiting at most `unlockSeconds`; returns how many it held.
    private static func releaseLocks() -> Int {
        let held = registry.lock.withLock {
            defer { registry.held = [:] }
            return Array(registry.held.values)
        }
        guard !held.isEmpty else { return 0 }
        let done = DispatchSemaphore(value: 0)
        let work = UnlockWork(held: held.map { ($0.store, $0.lock) })
        Task.detached {
            await work.run()
            done.signal()
        }
        _ = done.wait(timeout: .now() + unlockSeconds)
        return held.count
    }

    private struct UnlockWork: @unchecked Sendable {
        var held: [(any StateStore, StateLock)]
        func run() async { for (store, lock) in held { try? await store.unlock(lock) } }
    }

    private static func say(_ line: String) { Console.standard.err(line) }

    private static func flushAndExit(_ code: Int32) -> Never {
        fflush(nil)
        exit(code)
    }
}

extension Interruption {
    /// The process's signal handling, as the engine's runs see it.
    static let hooks = SignalHooks(
        acquiring: { acquiring($0) }, holding: { holding($0, in: $1) }, released: { released($0) }, receivedWhileIdle: { receivedWhileIdle },
        exitInterrupted: { exitInterrupted($0) }, draining: { draining($0) }, sendingEnded: { sendingEnded() }, finished: { finished() })
}
