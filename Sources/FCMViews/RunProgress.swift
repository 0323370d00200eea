import FCMCore
import Foundation

/// The progress line for people at a terminal and the event stream for machines, fed by the refresh and
/// apply engines' counters. At most 10 updates a second of either; the line is cleared when a phase ends.
package final class RunProgress: @unchecked Sendable {
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
    package static let interval = 0.1

    /// The events' timestamps: the run's day (FCMCTL_NOW rehearses another).
    private let now: @Sendable () -> Date

    package init(
        drawLine: Bool, writeLine: @escaping @Sendable (String) -> Void, events: (@Sendable (String) -> Void)?,
        clock: any RunClock = SystemClock(), now: (@Sendable () -> Date)? = nil
    ) {
        self.clock = clock
        started = clock.now()
        self.now = now ?? { clock.wallTime() }
        self.drawLine = drawLine
        self.writeLine = writeLine
        self.eventSink = events
    }

    /// Nothing drawn, nothing emitted: for runs without a terminal or events.
    package static let silent = RunProgress(drawLine: false, writeLine: { _ in }, events: nil)

    package func start(command: String) {
        event([("event", .string("start")), ("command", .string(command))])
    }

    package func beginPhase(_ name: String, total: Int) {
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
    @Sendable package func advance(_ count: Int) {
        lock.withLock { done += count }
        update(force: false)
    }

    package func endPhase() {
        update(force: true)
        lock.withLock {
            if lineShown { writeLine("\r\u{1B}[K") }
            lineShown = false
        }
    }

    package func object(address: String, status: String, operations: Int) {
        event([("event", .string("object")), ("address", .string(address)), ("status", .string(status)), ("operations", .int(operations))])
    }

    /// One event per object a plan removes from, with its removals counted by cause (`removed_causes`'s kinds),
    /// and one per refusal: a machine reading the stream learns why before the run ends.
    package func planned(_ plan: Plan) {
        guard eventSink != nil else { return }
        for change in ObjectChange.of(plan) where change.removes {
            var counts: [String: Int] = [:]
            for cause in change.causes.compactMap({ $0 }) { counts[cause.kind, default: 0] += 1 }
            event([
                ("event", .string("removals")), ("address", .string(change.address)), ("action", .string(change.action.rawValue)),
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
        let time = ISO8601DateFormatter().string(from: now())
        eventSink(JSONTree.object([("time", .string(time))] + fields).compact())
    }
}
