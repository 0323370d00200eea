import FCMCore
import Foundation

/// The state in a bucket, for CI runners that come and go. Objects under `prefix`:
///
///     state.json                       the ledger (StateFileFormat), or for a big state the index of its shards
///                                      (ShardIndex); every write conditional on the generation read
///     state.json.shards/NNNN-HASH.json a big state's shards, each immutable and named by its content
///     state.lock                       the lock: owner token, holder, operation, created, lease expiry
///     state.serial                     lineage and serial of the last state written, to catch restored copies
///     journal/SERIAL-RUN-SEQ.jsonl     journal segments: one object per append of a run in progress
///
/// The state manager over the bucket. Object storage cannot append, so each journal append is one new object
/// (created with ifGenerationMatch=0). The next state write folds them in, names their runs in
/// `merged_runs`, and deletes them. A run killed at any moment leaves segments whose intents the next
/// refresh resolves.
package final class GCSStateStore: ManagedStateStore {
    package let manager: StateManager

    /// `renewsInBackground`: off for tests on a ManualClock, which renew by hand.
    package init(
        storage: any ObjectStorage, prefix: String, lease: TimeInterval = 30, identity: ProcessIdentity = .current(), version: String = "",
        warn: @escaping @Sendable (String) -> Void = { _ in }, clock: any RunClock = SystemClock(),
        pollInterval: Duration = .milliseconds(500), renewsInBackground: Bool = true,
        policy: ShardPolicy = .standard
    ) {
        var prefix = prefix
        while prefix.hasSuffix("/") { prefix.removeLast() }
        let base = prefix.isEmpty ? "" : prefix + "/"
        let bucket = storage.displayName
        let layout = StateLayout(
            state: base + "state.json", lock: base + "state.lock", serial: base + "state.serial", journal: base + "journal/",
            medium: .bucket, locate: { "\(bucket)/\($0)" })
        manager = StateManager(
            storage: storage, layout: layout, displayName: "\(bucket)/\(prefix)",
            journalDisplayName: "the journal segments \(bucket)/\(base)journal/*", lease: lease, identity: identity, version: version,
            clock: clock, warn: warn, pollInterval: pollInterval.seconds, renewsInBackground: renewsInBackground, policy: policy)
    }

    var stateObject: String { manager.layout.state }
    var lockObject: String { manager.layout.lock }
    var serialObject: String { manager.layout.serial }
    var journalPrefix: String { manager.layout.journal }
}
