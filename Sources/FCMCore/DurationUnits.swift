/// The one place a `Duration` becomes a number: the run clock counts in `Double` seconds, libcurl and epoll in
/// milliseconds, Dispatch in nanoseconds.
extension Duration {
    package var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }

    /// Rounded up: a wait must not end a moment early and spin again, and a sub-millisecond timeout must not
    /// become 0, which libcurl reads as "no limit". Negative durations count as zero.
    package var millisecondsRoundedUp: Int {
        guard self > .zero else { return 0 }
        let (seconds, attoseconds) = components
        return Int(seconds) * 1000 + Int((attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000)
    }

    /// Negative durations count as zero.
    package var nanoseconds: Int {
        guard self > .zero else { return 0 }
        return Int(components.seconds) * 1_000_000_000 + Int(components.attoseconds / 1_000_000_000)
    }
}
