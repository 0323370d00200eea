import FCMCore
import FCMReconcile
import Foundation
import Synchronization

/// The progress line for people at a terminal, progress lines for a CI log, and the event stream for machines,
/// fed by the refresh and apply engines' counters. A terminal gets at most 10 updates a second on one line,
/// cleared when a phase ends. A log (stderr piped, as in every CI job) gets a line every 10 s while a phase runs,
/// even when nothing settles, and one when a phase that printed ends: a job that prints nothing for minutes looks
/// hung and gets cancelled. A phase done within 10 s prints nothing. Under `--format github` a phase's lines are
/// one collapsible group.
package final class RunProgress: Sendable {
    package enum Mode: Sendable, Equatable {
        case terminal
        case log(groups: Bool)
        case off
    }

    private let mode: Mode
    private let writeLine: @Sendable (String) -> Void
    private let eventSink: (@Sendable (String) -> Void)?
    /// The run's clock: rates and the update interval are measured on it.
    private let clock: any RunClock

    /// Where the current phase stands, behind one lock: answers arrive on any thread.
    private struct Phase {
        var name = ""
        var total = 0
        var done = 0
        var failed = 0
        var started: Double
        var lastUpdate: Double?
        var lastLogLine: Double?
        var lineShown = false
        var logLines = 0
        var groupOpen = false
        var heartbeat: (any DispatchSourceTimer)?
    }

    private let phase: Mutex<Phase>
    /// Seconds between updates on a terminal and between events.
    package static let interval = 0.1
    /// Seconds between lines in a log.
    package static let logInterval = 10.0

    /// The events' timestamps: the run's day (FCMCTL_NOW rehearses another).
    private let now: @Sendable () -> Date

    package init(
        mode: Mode, writeLine: @escaping @Sendable (String) -> Void, events: (@Sendable (String) -> Void)?,
        clock: any RunClock = SystemClock(), now: (@Sendable () -> Date)? = nil
    ) {
        self.clock = clock
        phase = Mutex(Phase(started: clock.now()))
        self.now = now ?? { clock.wallTime() }
        self.mode = mode
        self.writeLine = writeLine
        self.eventSink = events
    }

    /// Nothing drawn, nothing emitted: for runs without a terminal or events.
    package static let silent = RunProgress(mode: .off, writeLine: { _ in }, events: nil)

    package func start(command: String) {
        event([("event", .string("start")), ("command", .string(command))])
    }

    package func beginPhase(_ name: String, total: Int) {
        let now = clock.now()
        phase.withLock {
            $0.name = name
            $0.total = total
            $0.done = 0
            $0.failed = 0
            $0.started = now
            $0.lastUpdate = nil
            $0.lastLogLine = now
            $0.logLines = 0
        }
        event([("event", .string("phase")), ("phase", .string(name)), ("total", .int(total))])
        update(force: true)
        if case .log = mode { startHeartbeat() }
    }

    /// Safe from any task: the engines call it as answers arrive.
    @Sendable package func advance(_ count: Int, failed newlyFailed: Int = 0) {
        phase.withLock {
            $0.done += count
            $0.failed += newlyFailed
        }
        update(force: false)
    }

    package func endPhase() {
        update(force: true)
        let now = clock.now()
        phase.withLock { phase in
            phase.heartbeat?.cancel()
            phase.heartbeat = nil
            if phase.lineShown { writeLine("\r\u{1B}[K") }
            phase.lineShown = false
            // A log hears how a phase it was told about ended, and its group closes.
            if phase.logLines > 0 {
                writeLine(
                    Self.logLine(
                        phase.name, done: phase.done, total: phase.total, failed: phase.failed, elapsed: now - phase.started, finished: true)
                        + "\n")
            }
            if phase.groupOpen { writeLine("::endgroup::\n") }
            phase.groupOpen = false
            phase.lastLogLine = nil
            phase.logLines = 0
        }
    }

    /// In a log, a line every `logInterval` seconds while the phase runs, whether or not anything settled.
    private func startHeartbeat() {
        phase.withLock { phase in
            phase.heartbeat?.cancel()
            let timer = DispatchSource.makeTimerSource(queue: .global(qos: .utility))
            timer.schedule(deadline: .now() + 0.25, repeating: 0.25)
            timer.setEventHandler { [weak self] in self?.logIfDue() }
            timer.resume()
            phase.heartbeat = timer
        }
    }

    private func logIfDue() {
        guard case .log(let groups) = mode else { return }
        let now = clock.now()
        phase.withLock { phase in
            guard let last = phase.lastLogLine, now - last >= Self.logInterval else { return }
            phase.lastLogLine = now
            phase.logLines += 1
            if groups && !phase.groupOpen {
                writeLine("::group::\(PrintableText.oneLine(phase.name)) (\(phase.total) operations)\n")
                phase.groupOpen = true
            }
            writeLine(
                Self.logLine(phase.name, done: phase.done, total: phase.total, failed: phase.failed, elapsed: now - phase.started, finished: false)
                    + "\n")
        }
    }

    /// `Applying: 12000/50000 (24%), 1200/s, 3 failed, about 32 s left [10 s elapsed]`.
    static func logLine(_ phase: String, done: Int, total: Int, failed: Int, elapsed: Double, finished: Bool) -> String {
        let rate = elapsed > 0 ? Double(done) / elapsed : 0
        let percent = total > 0 ? " (\(done * 100 / total)%)" : ""
        let left = !finished && rate > 0 && total > done ? String(format: ", about %.0f s left", Double(total - done) / rate) : ""
        let state = finished ? "done, " : ""
        return "\(phase): \(state)\(done)/\(total)\(percent), \(Int(rate.rounded()))/s, \(failed) failed\(left) "
            + String(format: "[%.0f s elapsed]", elapsed)
    }

    package func object(address: Address, status: OperationStatus, operations: Int) {
        event([
            ("event", .string("object")), ("address", .string(address.description)), ("status", .string(status.rawValue)),
            ("operations", .int(operations)),
        ])
    }

    /// One event per object a plan removes from, with its removals counted by cause (`removed_causes`'s kinds),
    /// and one per refusal: a machine reading the stream learns why before the run ends.
    package func planned(_ plan: Plan) {
        guard eventSink != nil else { return }
        for change in ObjectChange.of(plan) where change.removes {
            var counts: [String: Int] = [:]
            for cause in change.causes.compactMap({ $0 }) { counts[cause.kind, default: 0] += 1 }
            event([
                ("event", .string("removals")), ("address", .string(change.address.description)), ("action", .string(change.action.rawValue)),
                ("count", .int(change.removed.count)),
                ("causes", .object(counts.sorted { $0.key < $1.key }.map { ($0.key, .int($0.value)) })),
            ])
        }
        for refusal in plan.refusals { event([("event", .string("refused")), ("message", .string(refusal.headline(Redactor(showTokens: false))))]) }
    }

    package func finish(exitCode: Int32, summary: [(String, JSONTree)] = []) {
        event([("event", .string("finish")), ("exit_code", .int(Int(exitCode)))] + summary)
    }

    private func update(force: Bool) {
        let now = clock.now()
        let snapshot: (phase: String, done: Int, total: Int, elapsed: Double)? = phase.withLock { phase in
            if !force, let lastUpdate = phase.lastUpdate, now - lastUpdate < Self.interval { return nil }
            phase.lastUpdate = now
            return (phase.name, phase.done, phase.total, now - phase.started)
        }
        guard let snapshot else { return }
        let rate = snapshot.elapsed > 0 ? Double(snapshot.done) / snapshot.elapsed : 0
        if mode == .terminal {
            let eta = rate > 0 && snapshot.total > snapshot.done ? String(format: ", ETA %.0f s", Double(snapshot.total - snapshot.done) / rate) : ""
            let line = String(format: "%@: %d/%d (%.0f/s%@)", snapshot.phase, snapshot.done, snapshot.total, rate, eta)
            phase.withLock {
                writeLine("\r\u{1B}[K" + line)
                $0.lineShown = true
            }
        }
        event([
            ("event", .string("progress")), ("phase", .string(snapshot.phase)), ("done", .int(snapshot.done)), ("total", .int(snapshot.total)),
            ("rate_per_second", .int(Int(rate.rounded()))),
        ])
    }

    private func event(_ fields: [(String, JSONTree)]) {
        guard let eventSink else { return }
        let time = ISO8601DateFormatter().string(from: now())
        eventSink(JSONTree.object([("time", .string(time))] + fields).compact())
    }
}
