import FCMCore
import Foundation

package enum PlatformDeprecations {
    package static let groupsClosedToNewProjects = day(2026, 12, 1)
    package static let groupsRemoved = day(2027, 9, 29)
    package static let iidClosedToNewProjects = day(2026, 10, 1)
    package static let iidRemoved = day(2027, 9, 29)

    static let groupsNextStep =
        "keep your own group → registration mapping (Google's guidance: https://firebase.google.com/docs/cloud-messaging/migrate-off-device-groups) "
        + "and send to its registrations or to a topic instead"
    static let iidNextStep = "set project.topicApi: v1 (the Topic Subscription API); fcmctl plans the same subscriptions through it"

    static func day(_ year: Int, _ month: Int, _ day: Int) -> Date {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        return calendar.date(from: DateComponents(year: year, month: month, day: day))!
    }

    /// `YYYY-MM-DD` in UTC.
    package static func dayText(_ date: Date) -> String { text(date) }

    static func text(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd"
        return formatter.string(from: date)
    }

    /// Whole UTC days from today to `date` (0 on the day itself, negative after it).
    package static func daysLeft(until date: Date, now: Date) -> Int {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        return calendar.dateComponents([.day], from: calendar.startOfDay(for: now), to: date).day ?? 0
    }

    static func days(_ count: Int) -> String { count == 1 ? "1 day" : "\(count) days" }

    /// One notice per feature in use, while it still works.
    package static func notices(usesGroups: Bool, createsGroups: Bool, usesIID: Bool, now: Date) -> [DeprecationNotice] {
        var notices: [DeprecationNotice] = []
        if usesGroups, now < groupsRemoved {
            let left = daysLeft(until: groupsRemoved, now: now)
            var message =
                "device groups are deprecated: FCM removes them on \(text(groupsRemoved)) (\(days(left)) left) and does not keep their data. "
            let cutoff = daysLeft(until: groupsClosedToNewProjects, now: now)
            if cutoff > 0 {
                message += "From \(text(groupsClosedToNewProjects)) (\(days(cutoff)) left) projects that never used them cannot start. "
            } else if createsGroups {
                message +=
                    "Since \(text(groupsClosedToNewProjects)) FCM refuses device groups to projects that did not use them before: "
                    + "this plan creates a group, which fails in such a project. "
            }
            let summary =
                "device groups are removed from FCM on \(text(groupsRemoved)) (\(days(left)) left)"
                + (createsGroups && cutoff <= 0
                    ? "; this plan creates one, which projects new to them cannot since \(text(groupsClosedToNewProjects))" : "")
                + " (--verbose for the next step)"
            notices.append(
                DeprecationNotice(
                    id: "device_groups", date: text(groupsRemoved), daysLeft: left, message: message + "Next step: " + groupsNextStep,
                    summary: summary))
        }
        if usesIID, now < iidRemoved {
            let left = daysLeft(until: iidRemoved, now: now)
            let closed = now >= iidClosedToNewProjects ? "closed to new projects since" : "closes to new projects on"
            notices.append(
                DeprecationNotice(
                    id: "iid_topic_api", date: text(iidRemoved), daysLeft: left,
                    message:
                        "the legacy Instance ID topic API (topicApi: iid) \(closed) \(text(iidClosedToNewProjects)) and is turned down on "
                        + "\(text(iidRemoved)) (\(days(left)) left). Next step: " + iidNextStep,
                    summary:
                        "the Instance ID topic API (topicApi: iid) is turned down on \(text(iidRemoved)) (\(days(left)) left), "
                        + "\(closed) \(text(iidClosedToNewProjects)) (--verbose for the next step)"))
        }
        return notices
    }

    /// Why the run must stop before sending anything: a feature FCM no longer has. nil while they work.
    package static func refusal(usesGroups: Bool, usesIID: Bool, now: Date) -> String? {
        var reasons: [String] = []
        if usesGroups, now >= groupsRemoved {
            reasons.append(
                "device groups were removed from FCM on \(text(groupsRemoved)); their data was not kept. Migration path: " + groupsNextStep)
        }
        if usesIID, now >= iidRemoved {
            reasons.append("the legacy Instance ID topic API was turned down on \(text(iidRemoved)). Migration path: " + iidNextStep)
        }
        return reasons.isEmpty ? nil : reasons.joined(separator: "; ") + ". Nothing was sent"
    }
}
