import FCMCore
import Testing

/// The one Duration conversion: libcurl and epoll take milliseconds, and libcurl reads 0 as "no limit", so a
/// sub-second timeout must round up, never down to 0.
@Suite struct DurationUnitsTests {
    @Test func millisecondsRoundUpAndNeverTurnATimeoutIntoNoLimit() {
        #expect(Duration.milliseconds(500).millisecondsRoundedUp == 500)
        #expect(Duration.microseconds(1).millisecondsRoundedUp == 1)
        #expect(Duration.microseconds(1500).millisecondsRoundedUp == 2)
        #expect(Duration.seconds(30).millisecondsRoundedUp == 30_000)
        #expect(Duration.zero.millisecondsRoundedUp == 0)
        #expect(Duration.milliseconds(-5).millisecondsRoundedUp == 0)
    }

    @Test func secondsAndNanosecondsKeepTheFraction() {
        #expect(Duration.milliseconds(1500).seconds == 1.5)
        #expect(Duration.milliseconds(1500).nanoseconds == 1_500_000_000)
        #expect(Duration.seconds(-1).nanoseconds == 0)
    }
}
