/// The HTTP statuses that say "try again later": what the client retries and what a report calls retryable,
/// one list for both. 502 and 504 are the front end's, not FCM's: the change may or may not have been made,
/// which a retry settles (409 or "already exists" on a repeated change count as done).
package enum TransientStatus {
    package static let all: Set<Int> = [429, 500, 502, 503, 504]
}
