/// What one operation asks of FCM: a device-group step or a subscription change. Outcomes, progress events
/// and saved plans name operations by it; the raw values are what plan files and JSON documents hold.
package enum OperationKind: String, Codable, CaseIterable, Sendable, CustomStringConvertible {
    case create
    case add
    case remove
    case subscribe
    case unsubscribe
    /// The steps of a group not yet sent, never attempted as one: an earlier step failed, or the run stopped.
    case groupSteps = "group steps"

    package var description: String { rawValue }
}

extension GroupStep {
    package var operation: OperationKind {
        switch self {
        case .create: .create
        case .add: .add
        case .remove: .remove
        }
    }

    /// nil for an operation that is no group step.
    package init?(_ operation: OperationKind, _ members: [Registration]) {
        switch operation {
        case .create: self = .create(members)
        case .add: self = .add(members)
        case .remove: self = .remove(members)
        case .subscribe, .unsubscribe, .groupSteps: return nil
        }
    }
}

extension SubscriptionChange.Action {
    package var operation: OperationKind {
        switch self {
        case .subscribe: .subscribe
        case .unsubscribe: .unsubscribe
        }
    }
}
