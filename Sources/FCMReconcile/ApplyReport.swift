import FCMCore

/// How an operation ended, as apply's JSON document and progress events name it: `done` for the operations
/// `ApplyReport.completed` counts, the others for an `OperationOutcome`.
package enum OperationStatus: String, CaseIterable, Sendable, CustomStringConvertible {
    case done
    case gone
    /// A create FCM answered "already exists": the subscription holds, but it is not fcmctl's, so it is not recorded.
    case alreadySubscribed = "already_subscribed"
    case failed
    case notAttempted = "not_attempted"

    package var description: String { rawValue }
}

/// What became of one operation that did not simply succeed. Values, not text: the views render them,
/// redacting registrations as the user asked.
package struct OperationOutcome: Sendable, Hashable {
    package enum Status: Sendable, Hashable {
        /// FCM no longer knows the registration (uninstalled, expired): drift, with a suggestion.
        case gone(reason: String)
        /// FCM already held the subscription the create asked for (409 ALREADY_EXISTS on the first answer): the
        /// goal holds, but someone else made it, so fcmctl does not record it and will never remove it.
        case alreadySubscribed
        case failed(code: String, message: String, retryable: Bool)
        /// Never sent: the run stopped, or an earlier step it depended on failed.
        case notAttempted(reason: String)

        package var kind: OperationStatus {
            switch self {
            case .gone: .gone
            case .alreadySubscribed: .alreadySubscribed
            case .failed: .failed
            case .notAttempted: .notAttempted
            }
        }
    }

    /// The group or topic.
    package var address: Address
    /// subscribe, unsubscribe, or a group step: create, add, remove (or the group's remaining steps).
    package var action: OperationKind
    package var registrations: [Registration]
    package var status: Status
}

package struct ApplyReport: Sendable {
    /// Requests FCM answered yes to (an IID batch of 1,000 registrations is one).
    package var requestsSucceeded = 0
    /// Operations done (a subscription or a group step), per object.
    package var completed: [Address: Int] = [:]
    /// Everything that was not simply done, in the order it happened.
    package var outcomes: [OperationOutcome] = []
    /// Why the run stopped early, if it did.
    package var stopped: String?
    /// It stopped because a stop was requested (a signal, `--timeout`), not for a fault of its own.
    package var stopRequested = false
    /// Failed operations whose outcome was never observed (every reply lost, a timeout, a 5xx): FCM may
    /// have made them, so they stay pending in the state until a refresh reads FCM. Counted among `failures`.
    package var unsettled = 0

    package var failures: [OperationOutcome] { outcomes.filter { if case .failed = $0.status { true } else { false } } }
    package var gone: [OperationOutcome] { outcomes.filter { if case .gone = $0.status { true } else { false } } }
    /// Creates FCM answered "already exists": held, not recorded (counted apart from `operationsDone`).
    package var alreadySubscribed: Int {
        outcomes.reduce(0) { if case .alreadySubscribed = $1.status { $0 + $1.registrations.count } else { $0 } }
    }
    package var notAttempted: Int {
        outcomes.reduce(0) { if case .notAttempted = $1.status { $0 + $1.registrations.count } else { $0 } }
    }
    package var operationsDone: Int { completed.values.reduce(0, +) }
    package var succeeded: Bool { failures.isEmpty && stopped == nil }
}
