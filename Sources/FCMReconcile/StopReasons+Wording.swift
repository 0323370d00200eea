import FCMCore

/// Why a run sent nothing more, as the apply report says it.
extension LeaseFence.Refused: CustomStringConvertible {
    package var description: String {
        "the state lock \(lockID) may have been lost (its lease was not confirmed in time, or it was taken over); stopped before sending more"
    }
}

extension StoppedBeforeSending: CustomStringConvertible {
    package var description: String { "not sent: \(reason)" }
}
