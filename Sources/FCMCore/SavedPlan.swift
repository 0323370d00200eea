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
        package var action: SavedWord<ChangeAction>
        package var steps: [Step]
        package var added: [SavedRegistration]
        package var removed: [SavedRegistration]
        package var unchanged: Int
    }

    package struct Step: Codable, Sendable, Hashable {
        package var operation: SavedWord<OperationKind>
        package var registrations: [SavedRegistration]
    }

    package struct Topic: Codable, Sendable, Hashable {
        package var name: String
        package var ownership: SavedWord<Ownership>
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
                name: change.name, action: SavedWord(change.action),
                steps: change.steps.map { Step(operation: SavedWord($0.operation), registrations: $0.registrations.map(SavedRegistration.init)) },
                added: change.added.map(SavedRegistration.init), removed: change.removed.map(SavedRegistration.init), unchanged: change.unchanged)
        }
        topics = plan.topics.map {
            Topic(
                name: $0.name, ownership: SavedWord($0.ownership), added: $0.added.map(SavedRegistration.init),
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
}
