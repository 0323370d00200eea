import FCMCore
import Testing

@Suite struct ManualClockTests {
    @Test func sleepingMovesTimeAtOnce() async throws {
        let clock = ManualClock()
        try await clock.sleep(seconds: 2.5)
        try await clock.sleep(seconds: 0.5)
        #expect(clock.now() == 3)
        #expect(clock.sleeps == [2.5, 0.5])
    }

    /// A deadline spends no time of its own: it passes only when sleeps or the test move time past it.
    @Test func aDeadlinePassesOnlyWhenTimeReachesIt() async throws {
        let clock = ManualClock()
        let deadline = Task { try await clock.wait(until: 10) }
        try await clock.sleep(seconds: 4)
        #expect(clock.now() == 4, "waiting for the deadline did not move time")
        clock.advance(6)
        try await deadline.value
        #expect(clock.now() == 10)
        try await clock.wait(until: 3)  // a moment already past returns at once
    }

    @Test func aCancelledDeadlineThrows() async {
        let clock = ManualClock()
        let deadline = Task { try await clock.wait(until: 60) }
        deadline.cancel()
        await #expect(throws: CancellationError.self) { try await deadline.value }
        #expect(clock.now() == 0)
    }
}
