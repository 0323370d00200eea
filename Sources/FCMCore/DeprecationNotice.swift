import Foundation

/// FCM features on their way out, with their dates (wire reference §0): device groups (closed to new
/// projects on 2026-12-01, removed 2027-09-29, their data not kept) and the legacy Instance ID server API
/// that `topicApi: iid` uses (closed to new projects on 2026-10-01, turned down 2027-09-29). Every plan,
/// apply and drift that touches them says how many days are left; after the turndown they are refused
/// before anything is sent. The clock is injected, so tests run on both sides of each day.
package struct DeprecationNotice: Sendable, Hashable {
    /// `device_groups` or `iid_topic_api`.
    package var id: String
    /// The day it stops working (UTC), `YYYY-MM-DD`.
    package var date: String
    package var daysLeft: Int
    package var message: String
    /// One line for a text run's stderr, which every command prints: the dates and the days left. The whole
    /// message, with its next step, is in the Markdown and JSON documents and under `--verbose`.
    package var summary: String

    package init(id: String, date: String, daysLeft: Int, message: String, summary: String? = nil) {
        self.id = id
        self.date = date
        self.daysLeft = daysLeft
        self.message = message
        self.summary = summary ?? message
    }
}
