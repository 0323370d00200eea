import ArgumentParser
import FCMCore
import Foundation

/// `--no-progress` and `--events FILE|-`.
struct ProgressOptions: ParsableArguments {
    @Flag(help: "No progress line on stderr (it is shown only when stderr is a terminal anyway).")
    var noProgress = false

    @Option(
        help: ArgumentHelp(
            "Write one JSON object per line (start, progress, object, finish) to FILE, or to stdout with '-' (the usual output then goes to stderr).",
            valueName: "file"))
    var events: String?

    init() {}
}

/// The progress line for people at a terminal and the event stream for machines, fed by the refresh and
/// apply engines' counters. At most 10 updates a second of either; the line is cleared when a phase ends.
final class RunProgress: @unchecked Sendable {
    private let lock = NSLock()
    private let drawLine: Bool
    private let writeLine: @Sendable (String) -> Void
    private let eventSink: (@Sendable (String) -> Void)?
    private var phase = ""
    private var total = 0
    private var done = 0
    /// The run's clock: rates and the update interval are measured on it.
    private let clock: any RunClock
    private var started: Double
    private var lastUpdate: Double?
    private var lineShown = false
    /// Seconds between updates.
    static let interval = 0.1

    init(
        drawLine: Bool, writeLine: @escaping @Sendable (String) -> Void, events: (@Sendable (String) -> Void)?,
        clock: any RunClock = World.current.clock
    ) {
        self.clock = clock
        started = clock.now()
        self.drawLine = drawLine
        self.writeLine = writeLine
        self.eventSink = events
    }

    /// Nothing drawn, nothing emitted: for runs without a terminal or events.
    static let silent = RunProgress(drawLine: false, writeLine: { _ in }, events: nil, clock: SystemClock())

    func start(command: String) {
        event([("event", .string("start")), ("command", .string(command))])
    }

    func beginPhase(_ name: String, total: Int) {
        lock.withLock {
            phase = name
            self.total = total
            done = 0
            started = clock.now()
            lastUpdate = nil
        }
        event([("event", .string("phase")), ("phase", .string(name)), ("total", .int(total))])
        update(force: true)
    }

    /// Safe from any task: the engines call it as answers arrive.
    @Sendable func advance(_ count: Int) {
        lock.withLock { done += count }
        update(force: false)
    }

    func endPhase() {
        update(force: true)
        lock.withLock {
            if lineShown { writeLine("\r\u{1B}[K") }
            lineShown = false
        }
    }

    func object(address: String, status: String, operations: Int) {
        event([("event", .string("object")), ("address", .string(address)), ("status", .string(status)), ("operations", .int(operations))])
    }

    func finish(exitCode: Int32, summary: [(String, JSONTree)] = []) {
        event([("event", .string("finish")), ("exit_code", .int(Int(exitCode)))] + summary)
    }

    private func update(force: Bool) {
        let snapshot: (phase: String, done: Int, total: Int, elapsed: Double)? = lock.withLock {
            let now = clock.now()
            if !force, let lastUpdate, now - lastUpdate < Self.interval { return nil }
            lastUpdate = now
            return (phase, done, total, now - started)
        }
        guard let snapshot else { return }
        let rate = snapshot.elapsed > 0 ? Double(snapshot.done) / snapshot.elapsed : 0
        if drawLine {
            let eta = rate > 0 && snapshot.total > snapshot.done ? String(format: ", ETA %.0f s", Double(snapshot.total - snapshot.done) / rate) : ""
            let line = String(format: "%@: %d/%d (%.0f/s%@)", snapshot.phase, snapshot.done, snapshot.total, rate, eta)
            lock.withLock {
                writeLine("\r\u{1B}[K" + line)
                lineShown = true
            }
        }
        event([
            ("event", .string("progress")), ("phase", .string(snapshot.phase)), ("done", .int(snapshot.done)), ("total", .int(snapshot.total)),
            ("rate_per_second", .int(Int(rate.rounded()))),
        ])
    }

    private func event(_ fields: [(String, JSONTree)]) {
        guard let eventSink else { return }
        let time = ISO8601DateFormatter().string(from: World.current.now())
        eventSink(JSONTree.object([("time", .string(time))] + fields).compact())
    }
}

extension ProgressOptions {
    /// The progress reporter for this run, and the console its usual output goes to: with `--events -`
    /// stdout carries only events, so the rest moves to stderr.
    func reporter(console: Console) throws -> (RunProgress, Console) {
        var output = console
        var sink: (@Sendable (String) -> Void)?
        if let events {
            if events == "-" {
                let write = console.writeOut
                sink = { write($0 + "\n") }
                output.writeOut = console.writeErr
                output.stdoutIsTerminal = console.stderrIsTerminal
            } else {
                // Events name registrations redacted; the file is a document, not a secret.
                guard let handle = try? OutputFiles.appending(events, mode: OutputFiles.document) else {
                    throw fail("cannot write --events \(events)")
                }
                sink = { handle.write(Data(($0 + "\n").utf8)) }
            }
        }
        let draw = console.stderrIsTerminal && !noProgress
        let progress = RunProgress(drawLine: draw, writeLine: console.writeErr, events: sink)
        return (progress, output)
    }
}

extension ProgressOptions {
    /// Runs a command's body with its progress reporter and console: the start event first, the finish event
    /// (with the exit code) last, whatever the body ends with.
    func running(_ command: String, _ body: (RunProgress) async throws -> Void) async throws {
        let (progress, console) = try reporter(console: Console.current)
        try await Console.$current.withValue(console) {
            progress.start(command: command)
            do {
                try await body(progress)
                progress.finish(exitCode: ExitCodes.success)
            } catch let code as ExitCode {
                progress.finish(exitCode: code.rawValue)
                throw code
            } catch {
                progress.finish(exitCode: ExitCodes.error)
                throw error
            }
        }
    }
}
