/// A saved plan holding a value no fcmctl writes: the views say which (`SavedPlanProblem+Wording`).
package enum SavedPlanProblem: Error, Sendable, Equatable {
    case invalidTarget(String)
    case unknownAction(group: String, word: String)
    case unknownStep(group: String, word: String)
    case unknownOwnership(topic: String, word: String)
    case registrationObservedTwice
    case observationWithoutStatus
}
