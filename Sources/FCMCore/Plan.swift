/// One request-sized step of a device-group change. Steps run in order; each keeps the group within
/// 1...20 members (product.md invariant 2).
package enum GroupStep: Hashable, Sendable {
    case create([Registration])
    case add([Registration])
    case remove([Registration])

    package var registrations: [Registration] {
        switch self {
        case .create(let members), .add(let members), .remove(let members): members
        }
    }
}

package struct GroupChange: Hashable, Sendable {
    package var name: String
    /// create, update or delete.
    package var action: ChangeAction
    package var steps: [GroupStep]
    package var added: [Registration]
    package var removed: [Registration]
    package var unchanged: Int

    package init(name: String, action: ChangeAction, steps: [GroupStep], added: [Registration], removed: [Registration], unchanged: Int) {
        self.name = name
        self.action = action
        self.steps = steps
        self.added = added
        self.removed = removed
        self.unchanged = unchanged
    }

    package var address: Address { .group(name) }
}

package struct SubscriptionChange: Hashable, Sendable {
    /// Named as an operation by `operation` (OperationKind).
    package enum Action: Sendable {
        case subscribe
        case unsubscribe
    }

    package var topic: String
    package var registration: Registration
    package var action: Action

    package init(topic: String, registration: Registration, action: Action) {
        self.topic = topic
        self.registration = registration
        self.action = action
    }
}

package struct TopicChange: Hashable, Sendable {
    package var name: String
    package var ownership: Ownership
    package var added: [Registration]
    package var removed: [Registration]
    /// Known registrations that already hold the subscription and stay.
    package var unchanged: Int

    package init(name: String, ownership: Ownership, added: [Registration], removed: [Registration], unchanged: Int) {
        self.name = name
        self.ownership = ownership
        self.added = added
        self.removed = removed
        self.unchanged = unchanged
    }

    package var address: Address { .topic(name) }
}

/// The difference between what the manifests declare and what FCM holds, as ordered requests to make.
package struct Plan: Hashable, Sendable {
    package var groups: [GroupChange]
    package var topics: [TopicChange]
    /// Differences that fcmctl will not act on (observe-only topics, gone registrations): drift to report.
    package var findings: [PlanFinding]
    /// Why each removal is in the plan (empty for a plan read back from a file, which does not keep them).
    package var causes = RemovalCauses()
    /// A device's old registration → its new one, for devices that rotated: the applier keeps the old one's
    /// subscriptions unless the new one's succeeded.
    package var successors: [Registration: Registration] = [:]
    /// Registrations FCM would not tell about in this plan's refresh: while any is left, the plan cannot say
    /// that FCM matches the manifest.
    package var unreadable = 0
    /// Why this plan may not be applied; empty when it may. A refused plan is shown whole, then the run ends.
    package var refusals: [PlanRefusal] = []

    package init(groups: [GroupChange] = [], topics: [TopicChange] = [], findings: [PlanFinding] = []) {
        self.groups = groups
        self.topics = topics
        self.findings = findings
    }

    package var hasChanges: Bool { !groups.isEmpty || !topics.isEmpty }

    /// Nothing to change and nothing left unknown: no registration unread, none declared that FCM does not
    /// know, no observe-only difference. Only then may a view say that FCM matches the manifest.
    package var inSync: Bool {
        !hasChanges && unreadable == 0 && refusals.isEmpty
            && !findings.contains {
                switch $0 {
                case .registrationGone, .observeOnlyDiffers, .groupNotInState: true
                default: false
                }
            }
    }

    package var summary: PlanSummary {
        var summary = PlanSummary()
        for group in groups {
            switch group.action {
            case .create: summary.groupsToCreate += 1
            case .delete: summary.groupsToDelete += 1
            case .update, .none: break
            }
            summary.membersToAdd += group.added.count
            summary.membersToRemove += group.removed.count
        }
        for topic in topics {
            summary.subscriptionsToAdd += topic.added.count
            summary.subscriptionsToRemove += topic.removed.count
        }
        return summary
    }
}

package struct PlanSummary: Hashable, Sendable {
    package var groupsToCreate = 0
    package var groupsToDelete = 0
    package var membersToAdd = 0
    package var membersToRemove = 0
    package var subscriptionsToAdd = 0
    package var subscriptionsToRemove = 0

    package init() {}

}
