import ArgumentParser
import FCMCore
import FCMState
import FCMViews
import Foundation

struct LockOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Take the state lock (true or false). Without it two runs can lose each other's records.", valueName: "bool"))
    var lock = true

    @Option(
        help: ArgumentHelp(
            "How long to wait for a state lock held by another run, e.g. 30s, 2m. Default: 0 (fail at once, exit 4).", valueName: "duration"))
    var lockTimeout: LockTimeout = LockTimeout(duration: .zero)
}

/// A duration on the command line: 30s, 2m, 1h, 500ms, or a number of seconds.
struct LockTimeout: ExpressibleByArgument {
    var duration: Duration
    /// As given, for messages.
    var text: String

    init(duration: Duration) {
        self.duration = duration
        let seconds = duration.components.seconds
        text = seconds % 3600 == 0 && seconds > 0 ? "\(seconds / 3600)h" : seconds % 60 == 0 && seconds > 0 ? "\(seconds / 60)m" : "\(seconds)s"
    }

    init?(argument: String) {
        text = argument
        let units: [(String, Double)] = [("ms", 0.001), ("s", 1), ("m", 60), ("h", 3600)]
        for (suffix, scale) in units where argument.hasSuffix(suffix) {
            guard let value = Double(argument.dropLast(suffix.count)), value >= 0 else { return nil }
            self.duration = .milliseconds(Int64(value * scale * 1000))
            return
        }
        guard let seconds = Double(argument), seconds >= 0 else { return nil }
        self.duration = .milliseconds(Int64(seconds * 1000))
    }
}

extension Pipeline {
    /// Runs `body` holding the state lock (unless `--lock=false`), and releases it however `body` ends.
    /// A lock held by another live run is exit 4, naming the holder.
    func withStateLock<T>(
        _ store: any StateStore, operation: String, options: LockOptions, _ body: (StateLock?) async throws -> T
    ) async throws -> T {
        guard options.lock else {
            if operation != "plan" {
                console.err("warning: running \(operation) without the state lock (--lock=false): a concurrent run can lose records")
            }
            return try await body(nil)
        }
        let lock: StateLock
        Interruption.acquiring(true)
        do {
            lock = try await store.lock(operation: operation, timeout: options.lockTimeout.duration)
        } catch let error as StateLockedError {
            Interruption.acquiring(false)
            throw fail("\(error)", code: ExitCodes.stateLocked)
        } catch {
            Interruption.acquiring(false)
            throw fail("cannot take the state lock: \(error). Nothing was sent")
        }
        // A signal that ends the process before `body` does releases the lock on the way out.
        let token = Interruption.holding(lock, in: store)
        Interruption.acquiring(false)
        if let signal = Interruption.receivedWhileIdle {
            try? await store.unlock(lock)
            Interruption.released(token)
            Interruption.exitInterrupted(signal)
        }
        fence.arm(lock)
        defer { fence.disarm() }
        let result: T
        do {
            result = try await body(lock)
        } catch {
            try? await store.unlock(lock)
            Interruption.released(token)
            throw error
        }
        defer { Interruption.released(token) }
        do {
            try await store.unlock(lock)
        } catch {
            console.err("warning: could not release the state lock \(lock.info.id): \(error). Remove it with: fcmctl state unlock \(lock.info.id)")
        }
        return result
    }
}
