import Foundation

/// A plan as `plan -out FILE` writes it: self-contained, so `apply FILE` on another machine needs nothing
/// else to run exactly these operations, or to refuse them (exit 5) when what they were computed from moved.
package struct SavedPlan: Codable, Sendable {
    package static let currentFormatVersion = 1

    package var formatVersion: Int
    package var fcmctlVersion: String
    package var createdAt: Date
    /// sha256 over the manifest files (path and bytes, sorted by path).
    package var manifestDigest: String
    package var manifestPaths: [String]
    /// Where the state was, as resolved when planning: `apply FILE` uses it unless `--state` or `-f` says otherwise.
    package var statePath: String?
    /// The state the plan was computed from; nil when there was none yet (then `lineage` is the new one).
    package var stateSerial: Int?
    package var lineage: String
    package var project: Project
    /// `--max-removals` in force when the plan was made.
    package var maxRemovals: Int?
    /// Declared groups and whether each is protected: the ledger records protection on apply.
    package var declaredGroups: [String: Bool]
    package var groups: [Group]
    package var topics: [Topic]
    /// address → digest of every observed fact the operations on that object depend on.
    package var fingerprints: [String: String]
    package var notes: [String]
    /// Device names of the registrations in the plan, for `show`.
    package var deviceNames: [String: String]

    package struct Project: Codable, Sendable, Hashable {
        package var id: String
        package var senderId: String
        package var topicApi: String
    }

    package struct Group: Codable, Sendable, Hashable {
        package var name: String
        package var action: String
        package var steps: [Step]
        package var added: [SavedRegistration]
        package var removed: [SavedRegistration]
        package var unchanged: Int
    }

    package struct Step: Codable, Sendable, Hashable {
        package var operation: String
        package var registrations: [SavedRegistration]
    }

    package struct Topic: Codable, Sendable, Hashable {
        package var name: String
        package var ownership: String
        package var added: [SavedRegistration]
        package var removed: [SavedRegistration]
        package var unchanged: Int
    }

    package init(
        plan: Plan, desired: DesiredState, observed: ObservedState, stateSerial: Int?, lineage: String, manifestDigest: String,
        manifestPaths: [String], maxRemovals: Int?, fcmctlVersion: String, createdAt: Date
    ) {
        formatVersion = Self.currentFormatVersion
        self.fcmctlVersion = fcmctlVersion
        self.createdAt = createdAt
        self.manifestDigest = manifestDigest
        self.manifestPaths = manifestPaths
        self.statePath = nil
        self.stateSerial = stateSerial
        self.lineage = lineage
        project = Project(id: desired.project.id, senderId: desired.project.senderId, topicApi: desired.project.topicAPI.rawValue)
        self.maxRemovals = maxRemovals
        declaredGroups = desired.groups.mapValues(\.protect)
        groups = plan.groups.map { change in
            Group(
                name: change.name, action: change.action.rawValue,
                steps: change.steps.map { Step(operation: $0.operationName, registrations: $0.registrations.map(SavedRegistration.init)) },
                added: change.added.map(SavedRegistration.init), removed: change.removed.map(SavedRegistration.init), unchanged: change.unchanged)
        }
        topics = plan.topics.map {
            Topic(
                name: $0.name, ownership: $0.ownership.rawValue, added: $0.added.map(SavedRegistration.init),
                removed: $0.removed.map(SavedRegistration.init), unchanged: $0.unchanged)
        }
        fingerprints = PlanFingerprint.facts(of: plan, observed: observed)
        notes = plan.notes.map(\.headline)
        var names: [String: String] = [:]
        for registration in plan.groups.flatMap({ $0.added + $0.removed }) + plan.topics.flatMap({ $0.added + $0.removed }) {
            if let name = desired.deviceNames[registration] { names[registration.value] = name }
        }
        deviceNames = names
    }

    /// The plan again, to run or to show. Throws on a value no fcmctl writes.
    package func plan() throws -> Plan {
        var plan = Plan()
        for group in groups {
            guard let action = GroupChange.Action(rawValue: group.action) else {
                throw SavedPlanError("group/\(group.name) has an unknown action '\(group.action)'")
            }
            let steps = try group.steps.map { step -> GroupStep in
                let members = step.registrations.map(\.registration)
                switch step.operation {
                case "create": return .create(members)
                case "add": return .add(members)
                case "remove": return .remove(members)
                default: throw SavedPlanError("group/\(group.name) has an unknown step '\(step.operation)'")
                }
            }
            plan.groups.append(
                GroupChange(
                    name: group.name, action: action, steps: steps, added: group.added.map(\.registration),
                    removed: group.removed.map(\.registration),
                    unchanged: group.unchanged))
        }
        for topic in topics {
            guard let ownership = Ownership(rawValue: topic.ownership) else {
                throw SavedPlanError("topic/\(topic.name) has an unknown ownership '\(topic.ownership)'")
            }
            plan.topics.append(
                TopicChange(
                    name: topic.name, ownership: ownership, added: topic.added.map(\.registration), removed: topic.removed.map(\.registration),
                    unchanged: topic.unchanged))
        }
        return plan
    }

    /// Device names by registration, for the views.
    package var registrationNames: [Registration: String] {
        var names: [Registration: String] = [:]
        for (value, name) in deviceNames {
            names[Registration(value: value, kind: .token)] = name
            names[Registration(value: value, kind: .fid)] = name
        }
        return names
    }

    package var projectSettings: ProjectSettings {
        ProjectSettings(id: project.id, senderId: project.senderId, topicAPI: TopicAPI(rawValue: project.topicApi) ?? .v1)
    }

    /// The declared groups, as much of the desired state as applying the plan needs.
    package var desiredForApply: DesiredState {
        var desired = DesiredState(project: projectSettings)
        for (name, protect) in declaredGroups { desired.groups[name] = DesiredGroup(name: name, members: [], protect: protect) }
        return desired
    }
}

package struct SavedPlanError: Error, CustomStringConvertible, Sendable {
    package var description: String
    package init(_ description: String) { self.description = description }
}

/// `{"token": "…"}` or `{"fid": "…"}`.
package struct SavedRegistration: Codable, Sendable, Hashable {
    package var registration: Registration

    package init(_ registration: Registration) { self.registration = registration }

    private enum CodingKeys: String, CodingKey { case token, fid }

    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        if let fid = try container.decodeIfPresent(String.self, forKey: .fid) {
            registration = Registration(value: fid, kind: .fid)
        } else {
            registration = Registration(value: try container.decode(String.self, forKey: .token), kind: .token)
        }
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(registration.value, forKey: registration.kind == .fid ? .fid : .token)
    }
}

extension GroupStep {
    package var operationName: String {
        switch self {
        case .create: "create"
        case .add: "add"
        case .remove: "remove"
        }
    }
}

/// What a plan's operations assume about FCM, per object, as a digest: a group's members (or its absence);
/// for each registration a topic change names, whether it is subscribed to that topic or gone. If any of
/// these moved, the plan is stale.
package enum PlanFingerprint {
    package static func facts(of plan: Plan, observed: ObservedState) -> [String: String] {
        var facts: [String: String] = [:]
        for group in plan.groups {
            let members = observed.groups[group.name].map { $0.members.map(\.value).sorted().joined(separator: "\n") } ?? "absent"
            facts[group.address] = digest("group\n" + members)
        }
        for topic in plan.topics {
            var lines: [String] = []
            for registration in Set(topic.added + topic.removed).sorted() {
                let state: String
                switch observed.registrations[registration] {
                case .gone?: state = "gone"
                case .active(let topics)?: state = topics.contains(topic.name) ? "subscribed" : "not-subscribed"
                case nil: state = "unknown"
                }
                lines.append("\(registration.kind.rawValue):\(registration.value)\t\(state)")
            }
            facts[topic.address] = digest("topic\n" + lines.joined(separator: "\n"))
        }
        return facts
    }

    /// FNV-1a, 128 bits as two 64-bit lanes: no cryptographic claim is made, only change detection.
    package static func digest(_ text: String) -> String {
        var first: UInt64 = 0xcbf2_9ce4_8422_2325
        var second: UInt64 = 0x8422_2325_cbf2_9ce4
        for byte in text.utf8 {
            first = (first ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
            second = (second ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 &+ 1
        }
        return String(first, radix: 16) + String(second, radix: 16)
    }
}
