import FCMCore
import Foundation
import Synchronization

/// Paces subscription changes to a project's quota: one limiter per project, shared by every request in
/// flight.
///
/// Pacing: each caller books the next free slot (a virtual schedule, as in GCRA). Callers whose slot is
/// ahead wait in one `WakeQueue` that a single sleeper releases a tick (25 ms) at a time, so a paced run
/// costs a wake-up per tick rather than a timer per request. Up to `burstSeconds` of unused rate may be
/// spent at once.
///
/// Adapting: answers are judged in windows of half a second (at least 20 answers), each starting with its
/// first answer, by the changes they carried (an IID batch's answer weighs its registrations, each by its own
/// result). A window in which more than 8 % of the changes were refused (429, or an IID batch's per-registration
/// RESOURCE_EXHAUSTED) is a quota wall (another
/// client shares the quota, or it is lower than configured): the rate drops to 90 % of what FCM did not
/// refuse in that window, and the next window is not judged. A window in which more than 8 % were server errors (5xx,
/// a per-registration INTERNAL, or no answer at all) is back-pressure: the rate drops by that share (at most by half). A smaller share is
/// noise that a retry absorbs. While the rate is what holds the run back and nothing is refused, it climbs
/// 5 % a second (1 % within 5 % of the last wall) up to the configured rate. Only the share, never a single
/// answer, moves it.
///
/// Cuts do not compound: after a cut, the next window sent at the new rate must show the share of errors at
/// least halved for another cut to follow (a window held back by something else, such as retries waiting out
/// their backoff, shows nothing and the rate holds). If it did not, the errors do not depend on the rate (a flaky backend, errors at
/// random) and going slower only makes the run longer: the rate holds until a window comes back clean, and
/// then climbs again. Whatever happens it never falls below a tenth of the configured rate (or of the last
/// quota wall found, if lower).
package final class RateLimiter: Sendable {
    package let configuredRate: Double
    private let clock: any RunClock
    private let burstSeconds: Double
    private let queue: WakeQueue
    private let pace: Mutex<Pace>

    /// Counted in changes, not requests: an IID batch of 1,000 weighs what 1,000 v1 requests do.
    struct Window {
        var start: Double
        /// Paced answers received (requests): a window is judged only with enough of them.
        var answers = 0
        var accepted = 0
        var refused = 0
        /// Changes answered with a 5xx (or a per-registration INTERNAL), and those of requests that got no answer.
        var failed = 0
        /// Changes booked: whether the rate was what held the run back.
        var booked = 0.0

        var changes: Int { accepted + refused + failed }
    }

    /// Answers judged together.
    static let windowSeconds = 0.5
    /// A window is judged only with this many answers (or after ten windows' time).
    static let minimumAnswers = 20
    /// More than this share of 429s in a window is a quota wall (5 % at random, a flaky day, is well below
    /// it: with a thousand answers a window that share varies by less than a point).
    static let wallShare = 0.08
    /// More than this share of server errors in a window is back-pressure.
    static let serverErrorShare = 0.08
    /// The rate never falls below this share of the configured rate (or of the last wall, if lower).
    static let floorShare = 0.1
    /// Waiters due within this much of the sleeper's wake-up leave with it.
    package static let tick = 0.025

    /// `perSecond` 0 or less means unlimited.
    package init(perSecond: Double, clock: any RunClock, burstSeconds: Double = 0.1, executor: (any TaskExecutor)? = nil) {
        configuredRate = perSecond
        self.clock = clock
        self.burstSeconds = burstSeconds
        let now = clock.now()
        pace = Mutex(
            Pace(configuredRate: perSecond, currentRate: perSecond, nextFree: now - burstSeconds, window: Window(start: now), lowest: perSecond))
        queue = WakeQueue(tick: Self.tick, now: { clock.now() }, sleep: { try? await clock.sleep(seconds: $0) }, executor: executor)
    }

    package var rate: Double { pace.withLock { $0.currentRate } }

    /// The lowest the rate has been in this run (`--verbose` prints it).
    package var lowestRate: Double { pace.withLock { $0.lowest } }

    /// The lowest the rate may go now.
    package var floor: Double { pace.withLock { $0.floorRate } }

    /// Lets every waiter go at once, and every later caller without waiting: the run is stopping, and each
    /// checks that before sending.
    package func releaseAll() {
        pace.withLock { $0.released = true }
        queue.releaseAll()
    }

    /// Waits until `cost` changes may be sent.
    package func acquire(_ cost: Double = 1) async throws {
        guard configuredRate > 0 else { return }
        let due: Double? = pace.withLock { pace in
            if pace.released { return nil }
            let now = clock.now()
            let start = max(pace.nextFree, now - burstSeconds)
            pace.nextFree = start + cost / pace.currentRate
            pace.window.booked += cost
            return start > now ? start : nil
        }
        guard let due else { return }
        await queue.wait(until: due)
    }

    /// How FCM answered a paced request.
    package enum Answer: Sendable {
        /// Done, or refused for a reason of its own (a 4xx other than 429).
        case accepted
        /// 429: over the quota.
        case refused
        /// 5xx, or no answer at all.
        case serverError
    }

    /// How FCM answered one paced request, change by change: a whole answer weighs as many changes as the
    /// request made; an IID batch's 200 tallies its per-registration results (a RESOURCE_EXHAUSTED among them
    /// counts as a 429 does, an INTERNAL as a 5xx).
    package struct Tally: Sendable, Equatable {
        package var accepted: Int
        package var refused: Int
        package var failed: Int

        package init(accepted: Int = 0, refused: Int = 0, failed: Int = 0) {
            self.accepted = accepted
            self.refused = refused
            self.failed = failed
        }

        package init(_ answer: Answer, changes: Int = 1) {
            switch answer {
            case .accepted: self.init(accepted: changes)
            case .refused: self.init(refused: changes)
            case .serverError: self.init(failed: changes)
            }
        }
    }

    /// How FCM answered a paced request: `refused` for a 429.
    package func record(refused: Bool) { record(refused ? .refused : .accepted) }

    package func record(_ answer: Answer) { record(Tally(answer)) }

    package func record(_ tally: Tally) {
        guard configuredRate > 0 else { return }
        pace.withLock { pace in
            let now = clock.now()
            // A window starts with its first answer: one opened at start-up (or before a quiet spell) would
            // judge the first answers of a run alone, over seconds nothing was sent in.
            if pace.window.answers == 0 {
                pace.window = Window(start: now, booked: pace.window.booked)
            }
            pace.window.answers += 1
            pace.window.accepted += tally.accepted
            pace.window.refused += tally.refused
            pace.window.failed += tally.failed
            let elapsed = now - pace.window.start
            let changes = pace.window.changes
            guard elapsed >= Self.windowSeconds, pace.window.answers >= Self.minimumAnswers || elapsed >= 10 * Self.windowSeconds,
                changes > 0
            else { return }
            pace.judge(elapsed: elapsed, changes: Double(changes), now: now)
            pace.window = Window(start: now)
        }
    }

    /// What the limiter has learned, behind its lock.
    private struct Pace {
        let configuredRate: Double
        var currentRate: Double
        var nextFree: Double
        var window: Window
        /// The window after a cut still holds answers to requests booked before it: it is not judged.
        var settling = false
        /// What FCM accepted when the last wall was found: the climb slows near it.
        var lastWall: Double?
        /// The share of errors (429 and 5xx) of the window that caused the last cut, while they last: a cut must
        /// be seen to help before another follows.
        var cutShare: Double?
        /// A cut did not lower the share of errors: they are not about the rate, so it holds.
        var holding = false
        /// Once the run is stopping, nobody waits for a slot.
        var released = false

        /// The lowest the rate has been in this run.
        var lowest: Double

        /// The lowest the rate may go now.
        var floorRate: Double {
            max(min(configuredRate, 1), RateLimiter.floorShare * min(configuredRate, lastWall ?? configuredRate))
        }

        /// Once per window.
        mutating func judge(elapsed: Double, changes: Double, now: Double) {
            if settling {
                settling = false
                return
            }
            let refusedShare = Double(window.refused) / changes
            let failedShare = Double(window.failed) / changes
            let wall = refusedShare > RateLimiter.wallShare
            let backPressure = failedShare > RateLimiter.serverErrorShare
            guard wall || backPressure else {
                // A window just under the threshold is the same errors seen through noise, not their end: were it
                // to end the episode, the next window over it would cut again, and the cuts would compound.
                if refusedShare + failedShare < 0.5 * min(RateLimiter.wallShare, RateLimiter.serverErrorShare) {
                    cutShare = nil
                    holding = false
                }
                if currentRate < configuredRate, window.booked >= 0.9 * currentRate * elapsed {
                    // Climb only while the rate is what holds the run back (a rate nobody uses proves nothing),
                    // 5 % a second, and 1 % once within 5 % of the last wall.
                    let step = lastWall.map { currentRate >= 0.95 * $0 } == true ? 0.01 : 0.05
                    currentRate = min(configuredRate, currentRate * (1 + step * elapsed))
                }
                return
            }
            let share = refusedShare + failedShare
            if let before = cutShare, share > 2 * before {
                // Much worse than what the last cut answered: something new (a wall on top of the noise).
                cutShare = nil
                holding = false
            }
            if let before = cutShare {
                // Only a window sent at the lowered rate shows whether the cut helped; one held back by something
                // else (the requests in flight, retries waiting out their backoff) proves nothing, and the rate holds.
                guard !holding, window.booked >= 0.9 * currentRate * elapsed else { return }
                if share > 0.5 * before {
                    // The cut did not help: these errors are not about the rate. A wall it seemed to find was none.
                    if wall { lastWall = nil }
                    holding = true
                    return
                }
            }
            // Cuts start from what was actually sent, not from a rate nobody reached.
            let sent = min(currentRate, changes / elapsed)
            var target = currentRate
            if wall {
                // The quota speaks through 429s alone: a 5xx was not refused for it (back-pressure answers those).
                let accepted = Double(window.accepted + window.failed) / elapsed
                lastWall = accepted
                target = min(currentRate, accepted) * 0.9
            }
            if backPressure { target = min(target, sent * max(0.5, 1 - failedShare)) }
            currentRate = max(floorRate, target)
            lowest = min(lowest, currentRate)
            cutShare = share
            nextFree = max(nextFree, now)  // no burst right after a cut
            settling = true
        }
    }
}
