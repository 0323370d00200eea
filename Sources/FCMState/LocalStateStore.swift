import FCMCore
import Foundation

/// The state as files in one directory (created 0700):
///
///     state.json           the ledger (StateFileFormat, mode 0600), replaced atomically; for a big state the
///                          index of its shards (ShardIndex)
///     state.json.shards/   a big state's shards, each immutable and named by its content
///     state.json.journal   intents and completions of the run in progress or of one that was killed
///     state.json.lock      who holds the lock (JSON), with a lease the holder renews
///     state.json.serial    lineage and serial of the last state this store wrote, to catch restored copies
///
/// The state manager over a `FileObjectStorage` of that directory; the journal is the one file it appends to.
package final class LocalStateStore: ManagedStateStore {
    package let path: String
    package let manager: StateManager

    /// `renewsInBackground`: off for tests on a ManualClock, which renew by hand.
    package init(
        path: String, lease: TimeInterval = 30, identity: ProcessIdentity = .current(), version: String = "",
        warn: @escaping @Sendable (String) -> Void = { _ in }, clock: any RunClock = SystemClock(),
        pollInterval: Duration = .milliseconds(250), renewsInBackground: Bool = true,
        policy: ShardPolicy = .standard
    ) {
        self.path = path
        let name = path.split(separator: "/").last.map(String.init) ?? path
        let layout = StateLayout(
            state: name, lock: name + ".lock", serial: name + ".serial", journal: name + ".journal", medium: .directory,
            locate: { $0 == name ? path : path + $0.dropFirst(name.count) })
        let kinds = [
            layout.state: "state", layout.lock: "state lock", layout.serial: "state serial record", layout.journal: "state journal",
        ]
        manager = StateManager(
            storage: FileObjectStorage(directory: PathText.directory(of: path), kinds: kinds, clock: clock), layout: layout,
            displayName: path, journalDisplayName: path + ".journal", lease: lease, identity: identity, version: version, clock: clock,
            warn: warn, pollInterval: pollInterval.seconds, renewsInBackground: renewsInBackground, policy: policy)
    }

    package var journalPath: String { path + ".journal" }

    package func lock(operation: String, timeout: Duration) async throws -> StateLock {
        // Checked before anything is created beside it: opening a FIFO blocks, and reading a device never ends.
        try FileIO.requireRegularFileOrAbsent(path, what: "state")
        return try await manager.lock(operation: operation, timeout: timeout)
    }
}
