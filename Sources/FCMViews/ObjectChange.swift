import FCMCore

/// One object's change, as every view shows it: the single model the text, JSON, Markdown and GitHub
/// renderers draw from.
package struct ObjectChange: Sendable {
    package var address: Address
    package var action: ChangeAction
    package var ownership: Ownership?
    package var added: [Registration]
    package var removed: [Registration]
    /// Why each of `removed` goes, index by index; empty when the plan does not say (a saved plan read back).
    package var causes: [RemovalCause?] = []
    /// Known registrations that keep their membership; nil when they were not read (a topic under
    /// `--refresh=changed` reads only the registrations whose declaration changed, so a count would lie).
    package var unchanged: Int?
    package var notes: [String] = []
    /// Where the manifest declares the object; nil for one it no longer declares (a group to delete).
    package var location: SourceLocation?

    /// `group` or `topic`, the word every format prints.
    package var type: String { address.isGroup ? "group" : "topic" }
    package var name: String { address.name }

    package var size: Int { added.count + removed.count }

    /// The cause of `removed[index]`, if the plan gave one.
    package func cause(at index: Int) -> RemovalCause? { index < causes.count ? causes[index] : nil }

    /// Removals counted by what they have in common (`RemovalCause.summary`), most first, then by wording.
    package static func causeCounts(_ changes: [ObjectChange]) -> [(summary: String, count: Int)] {
        var counts: [String: Int] = [:]
        for change in changes {
            for cause in change.causes.compactMap({ $0 }) { counts[cause.summary(in: change.type), default: 0] += 1 }
        }
        return counts.map { ($0.key, $0.value) }.sorted { $0.1 != $1.1 ? $0.1 > $1.1 : $0.0 < $1.0 }
    }

    /// Deletes the object or removes a member or subscription: what a reviewer must see first.
    package var removes: Bool { action == .delete || !removed.isEmpty }

    /// `unchangedRead`: false when topics were refreshed in part (`--refresh=changed`). Groups are always read
    /// whole when they are in a plan, so their counts stand.
    package static func of(_ plan: Plan, unchangedRead: Bool = true, desired: DesiredState? = nil) -> [ObjectChange] {
        plan.groups.map { group in
            var change = ObjectChange(
                address: group.address, action: group.action, ownership: nil,
                added: group.action == .delete ? [] : group.added, removed: group.removed, unchanged: group.unchanged,
                location: desired?.groups[group.name]?.location)
            if let causes = plan.causes.groups[group.name] { change.causes = group.removed.map { causes[$0] } }
            if group.steps.count > 1 { change.notes.append("\(group.steps.count) requests, in order, keeping the group within 1 to 20 members") }
            if group.action == .delete { change.notes.append("removing the last member deletes the group and its notification key") }
            return change
        }
            + plan.topics.map { topic in
                var change = ObjectChange(
                    address: topic.address, action: .update, ownership: topic.ownership, added: topic.added,
                    removed: topic.removed, unchanged: unchangedRead ? topic.unchanged : nil, location: desired?.topics[topic.name]?.location)
                if let causes = plan.causes.topics[topic.name] { change.causes = topic.removed.map { causes[$0] } }
                if topic.ownership == .authoritative && !topic.removed.isEmpty {
                    change.notes.append("authoritative: removes subscriptions of known registrations that the manifest does not declare")
                }
                return change
            }
    }

    /// Largest first, then by address: what a reviewer should read first, and a stable order.
    package static func largestFirst(_ changes: [ObjectChange]) -> [ObjectChange] {
        changes.sorted { $0.size != $1.size ? $0.size > $1.size : $0.address < $1.address }
    }

    /// What deletes or removes, group deletions first, then the most removals; and the rest, largest first.
    /// A reviewer reads the removals before any addition, however many additions there are.
    package static func removalsFirst(_ changes: [ObjectChange]) -> (removing: [ObjectChange], rest: [ObjectChange]) {
        let removing = changes.filter(\.removes).sorted {
            let (one, other) = ($0.action == .delete, $1.action == .delete)
            if one != other { return one }
            return $0.removed.count != $1.removed.count ? $0.removed.count > $1.removed.count : $0.address < $1.address
        }
        return (removing, largestFirst(changes.filter { !$0.removes }))
    }
}

/// Counts per action, the summary table of every format.
package struct ActionCounts: Sendable {
    package struct Row: Sendable {
        var objects = 0
        var added = 0
        var removed = 0
    }

    package var rows: [ChangeAction: Row] = [:]

    package init(_ changes: [ObjectChange]) {
        for change in changes {
            rows[change.action, default: Row()].objects += 1
            rows[change.action, default: Row()].added += change.added.count
            rows[change.action, default: Row()].removed += change.removed.count
        }
    }

    package subscript(action: ChangeAction) -> Row { rows[action] ?? Row() }
}
