import Foundation

/// A plan as `plan -out FILE` writes it: self-contained, so `apply FILE` on another machine needs nothing
/// else to run exactly these operations, or to refuse them (exit 5) when what they were computed from moved.
package struct SavedPlan: Codable, Sendable {
    /// 2: the plan carries its observations, the options it was made with, and a digest over all of it.
    package static let currentFormatVersion = 2

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
    /// How the plan was computed (refresh mode, adoption, targeting): `apply FILE` computes it again the same way.
    package var options: Options
    /// What FCM looked like when the plan was made, as far as the planner read it: with the manifest and the
    /// state it gives the operations again, so an operation the planner would not make cannot ride along.
    package var observations: SavedObservations
    /// `sha256:` over every section of the plan (`digestSections`); nil only in a file someone edited.
    package var digest: String?
    /// Section name → sha256 of that section, so a refusal can say which part of the file was edited.
    package var digestParts: [String: String]?

    package struct Options: Codable, Sendable, Hashable {
        package var refresh: String
        package var adoptExisting: Bool
        package var targets: [String]
        package var excludes: [String]

        package init(refresh: String = "all", adoptExisting: Bool = false, targets: [String] = [], excludes: [String] = []) {
            self.refresh = refresh
            self.adoptExisting = adoptExisting
            self.targets = targets
            self.excludes = excludes
        }

        /// Throws on an address no fcmctl writes.
        package func targeting() throws -> PlanTargeting {
            func parse(_ text: String) throws -> Address {
                guard let address = Address(text) else { throw SavedPlanProblem.invalidTarget(text) }
                return address
            }
            return PlanTargeting(targets: try targets.map(parse), excludes: try excludes.map(parse))
        }
    }

    package struct Project: Codable, Sendable, Hashable {
        package var id: String
        package var senderId: String
        package var topicApi: String

        package init(_ settings: ProjectSettings) {
            id = settings.id
            senderId = settings.senderId
            topicApi = settings.topicAPI.rawValue
        }
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

    /// `observedTopics`: every topic the planner looks at (declared, recorded, pending), whose subscriptions
    /// the plan keeps in its observations.
    package init(
        plan: Plan, desired: DesiredState, observed: ObservedState, stateSerial: Int?, lineage: String, manifestDigest: String,
        manifestPaths: [String], maxRemovals: Int?, fcmctlVersion: String, createdAt: Date, options: Options = Options(),
        observedTopics: Set<String>, notes: [String] = []
    ) {
        formatVersion = Self.currentFormatVersion
        self.fcmctlVersion = fcmctlVersion
        // Whole seconds: what the file's ISO 8601 date can hold, so the digest of the plan as written and of
        // the plan as read back are the same.
        self.createdAt = Date(timeIntervalSince1970: createdAt.timeIntervalSince1970.rounded(.down))
        self.manifestDigest = manifestDigest
        self.manifestPaths = manifestPaths
        self.statePath = nil
        self.stateSerial = stateSerial
        self.lineage = lineage
        project = Project(desired.project)
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
        self.notes = notes
        var names: [String: String] = [:]
        for registration in plan.groups.flatMap({ $0.added + $0.removed }) + plan.topics.flatMap({ $0.added + $0.removed }) {
            if let name = desired.deviceNames[registration] { names[registration.value] = name }
        }
        deviceNames = names
        self.options = options
        observations = SavedObservations(observed, topics: observedTopics)
    }

    /// The plan again, to run or to show. Throws on a value no fcmctl writes.
    package func plan() throws -> Plan {
        var plan = Plan()
        for group in groups {
            guard let action = GroupChange.Action(rawValue: group.action) else {
                throw SavedPlanProblem.unknownAction(group: group.name, action: group.action)
            }
            let steps = try group.steps.map { step -> GroupStep in
                let members = step.registrations.map(\.registration)
                switch step.operation {
                case "create": return .create(members)
                case "add": return .add(members)
                case "remove": return .remove(members)
                default: throw SavedPlanProblem.unknownStep(group: group.name, step: step.operation)
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
                throw SavedPlanProblem.unknownOwnership(topic: topic.name, ownership: topic.ownership)
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

extension SavedPlan {
    /// The canonical bytes of each section, named. Every field of the plan is in exactly one section, so an
    /// edit anywhere changes the digest; the digest fields themselves are in none. Dictionaries are written
    /// with sorted keys and sets as sorted arrays, so the same plan always gives the same bytes.
    package func digestSections() throws -> [(name: String, bytes: Data)] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        var sections: [(String, Data)] = []
        func section(_ name: String, _ fields: [(String, any Encodable)]) throws {
            var bytes = Data()
            for (field, value) in fields {
                bytes += Data("\(field)=".utf8)
                // Wrapped in an array: a bare nil or scalar is not a JSON document to every encoder.
                bytes += try encoder.encode([AnyEncodable(value)])
                bytes += Data("\n".utf8)
            }
            sections.append((name, bytes))
        }
        try section("about", [("formatVersion", formatVersion), ("fcmctlVersion", fcmctlVersion), ("createdAt", createdAt.ISO8601Format())])
        try section("manifest", [("manifestDigest", manifestDigest), ("manifestPaths", manifestPaths)])
        try section("state", [("statePath", statePath), ("stateSerial", stateSerial), ("lineage", lineage)])
        try section("project", [("project", project)])
        try section("limits", [("maxRemovals", maxRemovals), ("options", options)])
        try section("groups", [("declaredGroups", declaredGroups), ("groups", groups)])
        try section("topics", [("topics", topics)])
        try section("observations", [("observations", observations), ("fingerprints", fingerprints)])
        try section("display", [("notes", notes), ("deviceNames", deviceNames)])
        return sections
    }

    /// Who runs the hash is the caller's business (FCMCore stays free of crypto): it gets each section's bytes,
    /// then the lines `name sha256\n` of every section, in name order, for the whole.
    package func computeDigest(sha256: (Data) -> String) throws -> (digest: String, parts: [String: String]) {
        var parts: [String: String] = [:]
        for (name, bytes) in try digestSections() { parts[name] = sha256(bytes) }
        let lines = parts.keys.sorted().map { "\($0) \(parts[$0]!)\n" }.joined()
        return ("sha256:" + sha256(Data(lines.utf8)), parts)
    }
}

private struct AnyEncodable: Encodable {
    let value: any Encodable
    init(_ value: any Encodable) { self.value = value }
    func encode(to encoder: any Encoder) throws { try value.encode(to: encoder) }
}

/// What the planner read from FCM, in the plan file: groups (members), and each registration's
/// subscriptions to the topics the plan is about (the others are the apps' business and stay out of the file),
/// or that it is gone, or could not be read.
package struct SavedObservations: Codable, Sendable, Hashable {
    package var groups: [String: [SavedRegistration]]
    /// Groups that were looked up; nil when every group fcmctl knows was (a full refresh).
    package var checkedGroups: [String]?
    /// Groups whose members came from the state, not from FCM (which documents no member list).
    package var membersFromState: [String]?
    package var registrations: [SavedRegistrationStatus]

    package init(_ observed: ObservedState, topics: Set<String>) {
        groups = observed.groups.mapValues { $0.members.sorted().map(SavedRegistration.init) }
        checkedGroups = observed.checkedGroups?.sorted()
        let fromState = observed.groupsWithRecordedMembers
        membersFromState = fromState.isEmpty ? nil : fromState
        var statuses: [SavedRegistrationStatus] = []
        for (registration, status) in observed.registrations {
            switch status {
            case .active(let subscribed):
                statuses.append(SavedRegistrationStatus(registration: registration, topics: subscribed.intersection(topics).sorted()))
            case .gone(let reason):
                statuses.append(SavedRegistrationStatus(registration: registration, gone: reason))
            }
        }
        for (registration, reason) in observed.unreadable {
            statuses.append(SavedRegistrationStatus(registration: registration, unreadable: reason))
        }
        registrations = statuses.sorted { $0.registration < $1.registration }
    }

    /// The observations as the planner takes them. Throws on an entry that says nothing, or two entries for
    /// one registration: no fcmctl writes either.
    package func observedState() throws -> ObservedState {
        var observed = ObservedState(checkedGroups: checkedGroups.map(Set.init))
        let fromState = Set(membersFromState ?? [])
        for (name, members) in groups {
            observed.groups[name] = ObservedGroup(
                name: name, notificationKey: "", members: Set(members.map(\.registration)), membersFromFCM: !fromState.contains(name))
        }
        for entry in registrations {
            let registration = entry.registration
            guard observed.registrations[registration] == nil, observed.unreadable[registration] == nil else {
                throw SavedPlanProblem.registrationObservedTwice
            }
            if let topics = entry.topics {
                observed.registrations[registration] = .active(topics: Set(topics))
            } else if let reason = entry.gone {
                observed.registrations[registration] = .gone(reason: reason)
            } else if let reason = entry.unreadable {
                observed.unreadable[registration] = reason
            } else {
                throw SavedPlanProblem.observationWithoutStatus
            }
        }
        return observed
    }
}

/// `{"token": "…", "topics": […]}`, or `"gone": reason`, or `"unreadable": reason` in place of `topics`.
package struct SavedRegistrationStatus: Codable, Sendable, Hashable {
    package var registration: Registration
    package var topics: [String]?
    package var gone: String?
    package var unreadable: String?

    package init(registration: Registration, topics: [String]? = nil, gone: String? = nil, unreadable: String? = nil) {
        self.registration = registration
        self.topics = topics
        self.gone = gone
        self.unreadable = unreadable
    }

    private enum CodingKeys: String, CodingKey { case topics, gone, unreadable }

    package init(from decoder: any Decoder) throws {
        registration = try SavedRegistration(from: decoder).registration
        let container = try decoder.container(keyedBy: CodingKeys.self)
        topics = try container.decodeIfPresent([String].self, forKey: .topics)
        gone = try container.decodeIfPresent(String.self, forKey: .gone)
        unreadable = try container.decodeIfPresent(String.self, forKey: .unreadable)
    }

    package func encode(to encoder: any Encoder) throws {
        try SavedRegistration(registration).encode(to: encoder)
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeIfPresent(topics, forKey: .topics)
        try container.encodeIfPresent(gone, forKey: .gone)
        try container.encodeIfPresent(unreadable, forKey: .unreadable)
    }
}

/// A saved plan holding a value no fcmctl writes: the views say which (`SavedPlanProblem+Wording`).
package enum SavedPlanProblem: Error, Sendable, Equatable {
    case invalidTarget(String)
    case unknownAction(group: String, action: String)
    case unknownStep(group: String, step: String)
    case unknownOwnership(topic: String, ownership: String)
    case registrationObservedTwice
    case observationWithoutStatus
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
