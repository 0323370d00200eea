import FCMCore
import FCMEngine
import FCMViews
import Foundation
import Synchronization

/// What a signal does, by the phase the run is in.
extension Interruption {
    static func received(_ number: Int32) {
        let code = 128 + number
        let (first, phase): (Bool, Phase) = registry.withLock { registry in
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
            if registry.withLock({ registry in registry.acquiring > 0 }) {
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
    static func overdue(_ number: Int32, finishing: Bool) {
        let phase = registry.withLock { registry in registry.phase }
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
    static func releaseLocks() -> Int {
        let held = registry.withLock { registry in
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

    static func say(_ line: String) { Console.standard.err(line) }

    static func flushAndExit(_ code: Int32) -> Never {
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
