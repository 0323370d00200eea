import FCMCore

/// Where a state keeps its objects in a medium, and how messages name them. The state manager's rules are
/// the same for every medium; only names and a few words differ.
package struct StateLayout: Sendable {
    /// The ledger (StateFileFormat).
    package var state: String
    /// Who holds the lock (LockDocument), with a lease the holder renews.
    package var lock: String
    /// Lineage and serial of the last state written, to catch a restored older copy.
    package var serial: String
    /// The journal: the one object appended to where the medium can append, else the prefix of its segments.
    package var journal: String
    package var medium: StateMedium
    /// An object's name as a person finds it: a path, or a gs:// URL.
    package var locate: @Sendable (String) -> String

    package init(
        state: String, lock: String, serial: String, journal: String, medium: StateMedium, locate: @escaping @Sendable (String) -> String
    ) {
        self.state = state
        self.lock = lock
        self.serial = serial
        self.journal = journal
        self.medium = medium
        self.locate = locate
    }
}

/// What a state lives on, for the words of messages and the few rules that differ.
package enum StateMedium: Sendable {
    /// Files in a directory; versions are lineage and serial, as the state file has always said.
    case directory
    /// A bucket; versions also carry the object's generation, the condition of the next write.
    case bucket
    /// Memory, for tests of everything above the store.
    case memory

    var carriesGeneration: Bool { self == .bucket }

    /// How a person removes a lock that cannot be read.
    var lockRemedy: String {
        self == .directory ? "if no fcmctl run is active, delete that file" : "if no fcmctl run is active, remove it with `fcmctl state unlock`"
    }

    /// The end of the message of a lost compare-and-swap.
    var conflictAdvice: String {
        self == .bucket
            ? "Another writer got there first; nothing was written by this run. Run again to plan on the newer state"
            : "Another run wrote it; nothing was written by this one. Run again to plan on the newer state"
    }
}
