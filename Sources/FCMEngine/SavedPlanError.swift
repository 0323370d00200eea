import FCMCore

/// A plan file that cannot be read or written, said for a person.
package struct SavedPlanError: Error, CustomStringConvertible, Sendable {
    package var description: String
    package init(_ description: String) { self.description = description }
}

extension SavedPlanProblem: CustomStringConvertible {
    package var description: String {
        switch self {
        case .invalidTarget(let text): "the plan has an invalid target '\(text)'"
        case .unknownAction(let group, let action): "\(Address.group(group)) has an unknown action '\(action)'"
        case .unknownStep(let group, let step): "\(Address.group(group)) has an unknown step '\(step)'"
        case .unknownOwnership(let topic, let ownership): "\(Address.topic(topic)) has an unknown ownership '\(ownership)'"
        case .registrationObservedTwice: "the plan's observations name one registration twice"
        case .observationWithoutStatus: "the plan's observations have a registration with no status"
        }
    }
}

extension LedgerError: CustomStringConvertible {
    package var description: String {
        switch self {
        case .serialExhausted(let serial):
            "the state's serial \(serial) cannot be increased; start a new lineage with `fcmctl state pull`, edit its serial, and `state push --force` it"
        }
    }
}
