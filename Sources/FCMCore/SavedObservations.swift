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
