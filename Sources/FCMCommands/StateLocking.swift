import ArgumentParser
import FCMCore
import FCMEngine

struct LockOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Take the state lock (true or false). Without it two runs can lose each other's records.", valueName: "bool"))
    var lock = true

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp(
            "How long to wait for a state lock held by another run, e.g. 30s, 2m. Default: 0, which fails at once (exit 4).", valueName: "duration"),
        transform: LockTimeout.parse)
    var lockTimeout: LockTimeout = LockTimeout(duration: .zero)
}

/// `--lock` and `--lock-timeout` on a command that takes no lock (plan): accepted, so scripts written when
/// plan locked keep working, and hidden from help.
struct ReadOnlyLockOptions: ParsableArguments {
    @Option(help: .hidden) var lock = true
    @Option(help: .hidden) var lockTimeout: LockTimeout = LockTimeout(duration: .zero)
}

/// A duration on the command line: 30s, 2m, 1h, 500ms, or a number of seconds.
struct LockTimeout: ExpressibleByArgument, CustomStringConvertible {
    var duration: Duration
    /// As given, for messages.
    var text: String

    init(duration: Duration) {
        self.duration = duration
        let seconds = duration.components.seconds
        text = seconds % 3600 == 0 && seconds > 0 ? "\(seconds / 3600)h" : seconds % 60 == 0 && seconds > 0 ? "\(seconds / 60)m" : "\(seconds)s"
    }

    /// As written, for help's "(default: 30m)".
    var description: String { text }

    /// The option's parser: a value that is not a duration is named as what it is, `-1` too (parsed as a value
    /// rather than taken for an option).
    static func parse(_ argument: String) throws -> LockTimeout {
        if let parsed = LockTimeout(argument: argument) { return parsed }
        if argument.hasPrefix("-") {
            throw ValidationError("'\(argument)' is a negative duration: give a length of time such as 30s, 5m or 1h (0 for none)")
        }
        throw ValidationError("'\(argument)' is not a duration: write a number with ms, s, m or h, such as 30s, 5m or 1h")
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

extension Session {
    /// The engine's lock discipline with the command line's `--lock` and `--lock-timeout`; an engine failure
    /// inside is printed as the command's error.
    func withStateLock<T>(
        _ store: any StateStore, operation: String, options: LockOptions, _ body: (StateLock?) async throws -> T
    ) async throws -> T {
        try await surfacing {
            try await withStateLock(store, operation: operation, lock: options.lock, timeout: options.lockTimeout.duration, body)
        }
    }
}
