import Foundation

/// Paces subscription changes to a project's quota: one limiter per project, shared by every request in
/// flight.
///
/// Pacing: each caller books the next free slot (a virtual schedule, as in GCRA). Callers whose slot is
/// ahead wait in one `WakeQueue` that a single sleeper releases a tick (25 ms) at a time, so a paced run
/// costs a wake-up per tick rather than a timer per request. Up to `burstSeconds` of unused rate may be
/// spent at once.
///
/// Adapting: answers are judged in windows of half a second (at least 20 answers), each starting with its
/// first answer. A window in which more than 8 % of the paced answers were 429 is a quota wall (another
/// client shares the quota, or it is lower than configured): the rate drops to 90 % of what FCM accepted in
/// that window, and the next window is not judged. A smaller share is noise that a retry absorbs (scattered
/// 429s are not a wall). While the rate is what holds the run back and nothing is refused, it climbs 5 % a
/// second (1 % within 5 % of the last wall) up to the configured rate. Only the share, never a single 429,
/// moves it.
package final class RateLimiter: @unchecked Sendable {
    package let configuredRate: Double
    private let clock: any PacingClock
    private let burstSeconds: Double
    private let lock = NSLock()
    private var currentRate: Double
    private var nextFree: Double
    private let queue: WakeQueue
    private var window = Window(start: 0)
    /// The window after a cut still holds answers to requests booked before it: it is not judged.
    private var settling = false
    /// What FCM accepted when the last wall was found: the climb slows near it.
    private var lastWall: Double?

    struct Window {
        var start: Double
        var accepted = 0
        var refused = 0
        /// Changes booked: whether the rate was what held the run back.
        var booked = 0.0
    }

    /// Answers judged together.
    static let windowSeconds = 0.5
    /// A window is judged only with this many answers (or after ten windows' time).
    static let minimumAnswers = 20
    /// More than this share of 429s in a window is a quota wall (5 % at random, a flaky day, is well below
    /// it: with a thousand answers a window that share varies by less than a point).
    static let wallShare = 0.08
    /// Waiters due within this much of the sleeper's wake-up leave with it.
    package static let tick = 0.025

    /// `perSecond` 0 or less means unlimited.
    package init(perSecond: Double, clock: any PacingClock, burstSeconds: Double = 0.1, executor: (any TaskExecutor)? = nil) {
        configuredRate = perSecond
        currentRate = perSecond
        self.clock = clock
        self.burstSeconds = burstSeconds
        let now = clock.now()
        nextFree = now - burstSeconds
        window = Window(start: now)
        queue = WakeQueue(tick: Self.tick, now: { clock.now() }, sleep: { try? await clock.sleep(seconds: $0) }, executor: executor)
    }

    package var rate: Double { lock.withLock { currentRate } }

    /// Waits until `cost` changes may be sent.
    package func acquire(_ cost: Double = 1) async throws {
        guard configuredRate > 0 else { return }
        let due: Double? = lock.withLock {
            let now = clock.now()
            let start = max(nextFree, now - burstSeconds)
            nextFree = start + cost / currentRate
            window.booked += cost
            return start > now ? start : nil
        }
        guard let due else { return }
        await queue.wait(until: due)
    }

    /// How FCM answered a paced request: `refused` for a 429.
    package func record(refused: Bool) {
        guard configuredRate > 0 else { return }
        lock.withLock {
            let now = clock.now()
            // A window starts with its first answer: one opened at start-up (or before a quiet spell) would
            // judge the first answers of a run alone, over seconds nothing was sent in.
            if window.accepted + window.refused == 0 { window = Window(start: now, booked: window.booked) }
            if refused { window.refused += 1 } else { window.accepted += 1 }
            let elapsed = now - window.start
            let answers = window.accepted + window.refused
            guard elapsed >= Self.windowSeconds, answers >= Self.minimumAnswers || elapsed >= 10 * Self.windowSeconds else { return }
            if settling {
                settling = false
            } else if Double(window.refused) > Self.wallShare * Double(answers) {
                let accepted = Double(window.accepted) / elapsed
                lastWall = accepted
                currentRate = max(min(configuredRate, 1), min(currentRate, accepted) * 0.9)
                nextFree = max(nextFree, now)  // no burst right after a wall
                settling = true
            } else if currentRate < configuredRate, window.booked >= 0.9 * currentRate * elapsed {
                // Climb only while the rate is what holds the run back (a rate nobody uses proves nothing),
                // 5 % a second, and 1 % once within 5 % of the last wall.
                let step = lastWall.map { currentRate >= 0.95 * $0 } == true ? 0.01 : 0.05
                currentRate = min(configuredRate, currentRate * (1 + step * elapsed))
            }
            window = Window(start: now)
        }
    }
}
