import FCMCore
import Foundation

/// When and how long to wait before trying a request again.
///
/// Retried: the statuses of `TransientStatus` and transport failures (connection refused or reset, timeouts). Never retried:
/// any other status, in particular the 4xx that mean the request itself is wrong. Delays grow
/// exponentially with full jitter (a uniform draw up to the exponential ceiling, so synchronized clients
/// spread out); a server's Retry-After wins when longer, up to `retryAfterCap`, beyond which waiting is
/// pointless and the request fails. Attempts and total time are bounded.
package struct RetryPolicy: Sendable {
    package var maxAttempts = 6
    package var baseDelay = 0.5
    package var maxDelay = 30.0
    package var maxTotal = 180.0
    package var retryAfterCap = 120.0

    package init() {}

    package static let retryableStatuses = TransientStatus.all

    package enum Decision: Equatable, Sendable {
        case retry(after: Double)
        case giveUp
    }

    /// `attempt` counts from 1 (the attempt that just failed); `elapsed` is time since the first attempt.
    package func decide(
        status: Int?, retryAfter: String?, attempt: Int, elapsed: Double, jitter: any JitterSource, now: Date
    ) -> Decision {
        if let status, !Self.retryableStatuses.contains(status) { return .giveUp }
        guard attempt < maxAttempts else { return .giveUp }
        let ceiling = min(maxDelay, baseDelay * pow(2, Double(attempt - 1)))
        var delay = jitter.unit() * ceiling
        if let retryAfter, let requested = Self.parseRetryAfter(retryAfter, now: now) {
            guard requested <= retryAfterCap else { return .giveUp }
            delay = max(delay, requested)
        }
        guard elapsed + delay <= maxTotal else { return .giveUp }
        return .retry(after: delay)
    }

    /// Retry-After is either delay-seconds or an HTTP date (RFC 9110 §10.2.3).
    package static func parseRetryAfter(_ value: String, now: Date) -> Double? {
        let trimmed = value.trimmingCharacters(in: .whitespaces)
        if let seconds = Double(trimmed), seconds >= 0 { return seconds }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        guard let date = formatter.date(from: trimmed) else { return nil }
        return max(0, date.timeIntervalSince(now))
    }
}
