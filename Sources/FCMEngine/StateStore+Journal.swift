import FCMCore

/// Where a run's completed operations wait when the final write fails.
extension StateStore {
    package var journalDisplayName: String { "the journal of \(displayName)" }
}
