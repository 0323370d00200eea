import FCMCore
import Foundation
import Synchronization

/// The one implementation of the state rules over any `ObjectStorage`: the lineage/serial compare-and-swap
/// of writes, rollback and deletion detection, the journal (one appended object, or one object per append
/// where the medium cannot append), and the lease lock (StateManager+Lock.swift). The local, gcs and
/// in-memory stores are this over a directory, a bucket and memory.
package final class StateManager: StateStore {
    package let storage: any ObjectStorage
    package let layout: StateLayout
    package let displayName: String
    package let journalDisplayName: String
    let lease: Double
    let identity: ProcessIdentity
    let version: String
    let clock: any RunClock
    let warn: @Sendable (String) -> Void
    /// How often a lock is tried again while another holder has it.
    let pollInterval: Double
    /// Renew held leases on a schedule of their own; off where a test renews by hand (`renew`) on a ManualClock,
    /// which a schedule would spin forward.
    let renewsInBackground: Bool
    let leases = Mutex<[String: HeldLease]>([:])
    /// When the state is written as one document and when as shards (ShardPolicy).
    let policy: ShardPolicy

    package init(
        storage: any ObjectStorage, layout: StateLayout, displayName: String, journalDisplayName: String, lease: Double,
        identity: ProcessIdentity, version: String, clock: any RunClock, warn: @escaping @Sendable (String) -> Void,
        pollInterval: Double, renewsInBackground: Bool, policy: ShardPolicy = .standard
    ) {
        self.policy = policy
        self.storage = storage
        self.layout = layout
        self.displayName = displayName
        self.journalDisplayName = journalDisplayName
        self.lease = lease
        self.identity = identity
        self.version = version
        self.clock = clock
        self.warn = warn
        self.pollInterval = pollInterval
        self.renewsInBackground = renewsInBackground
    }

    var statePath: String { layout.locate(layout.state) }

    /// Every call to the medium that may fail for reasons of its own goes through here, so a bucket's error
    /// names the store and says what to check. (A directory's errors are StateErrors that say so already.)
    func attempt<T>(_ what: String, _ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch ObjectStorageError.failed(let message) {
            throw StateError(
                "\(displayName): \(what) failed: \(message). Check the bucket exists and the credentials may "
                    + "storage.objects.get/create/delete/list on it")
        }
    }

    // MARK: Reading

    /// Without the lock (plan and drift take none), a run that writes meanwhile can replace the state between
    /// these reads: the serial record, read last, is then newer than the state read first, and the read is made
    /// again, so what is returned is one generation with its journal. Only a serial record that stays newer is
    /// an older state put back.
    package func read() async throws -> StateSnapshot { try await read(selecting: nil) }

    /// `selecting`: given a sharded state's outline, the shards to load (nil: all); the ledger returned then
    /// holds those shards' records and says so (`Ledger.slice`). A state with a journal to fold in is read whole.
    package func read(selecting: ShardSelector?) async throws -> StateSnapshot {
        var attempts = 0
        while true {
            attempts += 1
            do {
                return try await readOnce(selecting: selecting)
            } catch is StateConflictError where attempts < Self.readAttempts {
                continue
            }
        }
    }

    static let readAttempts = 5

    /// A sharded state's index is read first and its shards last: they are immutable, so whatever happens
    /// meanwhile they are the ones that index named (or gone, which `loadShards` tells apart).
    private func readOnce(selecting: ShardSelector?) async throws -> StateSnapshot {
        let stored = try await attempt("reading the state") { try await storage.get(layout.state) }
        var decoded: StateFileFormat.Decoded?
        var index: ShardIndex?
        if let stored, ShardIndex.isIndex(stored.bytes) {
            index = try ShardIndex.decode(stored.bytes, source: statePath, stateName: stateName)
        } else {
            decoded = try stored.map { try StateFileFormat.decode($0.bytes, source: statePath) }
        }
        let journal = try await readJournal()
        let marker = try await attempt("reading the state's serial record") { try await storage.get(layout.serial) }
        if let index, let stored {
            try checkNotRolledBack(lineage: index.lineage, serial: index.serial, recorded: StateAssembly.recordedSerial(marker?.bytes))
            // Only a state with nothing to replay is read in part: a journal's records may be in any shard.
            let only = journal.bytes?.isEmpty ?? true ? selecting?(index.outline) : nil
            var ledger = try await loadShards(index, indexGeneration: stored.generation, only: only)
            if let only { ledger.slice = LedgerSlice(bits: index.bits, loaded: only) }
            decoded = StateFileFormat.Decoded(ledger: ledger, formatVersion: StateFileFormat.currentVersion, mergedRuns: index.mergedRuns)
        } else if let decoded {
            let recorded = StateAssembly.recordedSerial(marker?.bytes)
            try checkNotRolledBack(lineage: decoded.ledger.lineage, serial: decoded.ledger.serial, recorded: recorded)
            if let recorded, let format = recorded.format, decoded.formatVersion < format {
                throw StateVersionRules.olderThanRecorded(
                    statePath, named: decoded.formatVersion, recorded: recorded, recordPath: layout.locate(layout.serial))
            }
        } else {
            try StateAssembly.refuseMissingState(statePath, marker: marker != nil, journal: !journal.names.isEmpty)
        }
        var snapshot = try StateAssembly.snapshot(
            stored: decoded, journal: journal.bytes, statePath: statePath, journalPath: layout.locate(layout.journal))
        if let stored, let version = snapshot.version { snapshot.version = stamped(version, stored.generation) }
        return snapshot
    }

    /// A state older than the last one this store wrote is a restored copy: running on it would forget every
    /// record made since, so it is refused until a person says so (`state push --force`).
    private func checkNotRolledBack(lineage: String, serial: Int, recorded: RecordedSerial?) throws {
        guard let recorded, recorded.lineage == lineage, serial < recorded.serial else { return }
        if layout.medium == .bucket {
            throw StateConflictError(
                "\(statePath) has serial \(serial), but this bucket last recorded serial \(recorded.serial) of lineage "
                    + "\(recorded.lineage): an older generation was put back, and using it would forget what was recorded since. "
                    + "Restore the newer generation, or roll back deliberately with `fcmctl state push --force`")
        }
        throw StateConflictError(
            "\(statePath) has serial \(serial), but this store last wrote serial \(recorded.serial) of lineage \(recorded.lineage): "
                + "it looks like an older copy was restored, and using it would forget what was recorded since. "
                + "Put the newer state back, or if you mean to roll back, run `fcmctl state push --force \(statePath)`")
    }

    /// The journal's objects in order, joined: each holds whole lines but perhaps a torn last one.
    func readJournal() async throws -> (bytes: [UInt8]?, names: [String]) {
        let names = try await attempt("listing the journal") { try await storage.list(prefix: layout.journal) }
        guard !names.isEmpty else { return (nil, []) }
        var bytes: [UInt8] = []
        var present: [String] = []
        for name in names {
            guard let object = try await attempt("reading the journal \(layout.locate(name))", { try await storage.get(name) }) else {
                continue
            }
            bytes += object.bytes
            present.append(name)
        }
        return (present.isEmpty ? nil : bytes, present)
    }

    /// `version` as this medium states it: with the generation where the next write is conditional on it.
    func stamped(_ version: StateVersion, _ generation: Int64) -> StateVersion {
        var version = version
        version.generation = layout.medium.carriesGeneration ? String(generation) : nil
        return version
    }

    // MARK: Writing

    package func storedVersion() async throws -> StateVersion? {
        guard let stored = try await attempt("reading the state", { try await storage.get(layout.state) }) else { return nil }
        return stamped(try StateFileFormat.version(of: stored.bytes, source: statePath), stored.generation)
    }

    package func write(_ ledger: Ledger, replacing expected: StateVersion?, force: Bool) async throws -> StateVersion {
        if !force, let expected {
            if ledger.lineage != expected.lineage {
                throw StateConflictError(
                    "\(displayName): refusing to replace lineage \(expected.lineage) with \(ledger.lineage); pass --force to do so")
            }
            if ledger.serial <= expected.serial {
                throw StateConflictError(
                    "\(displayName): refusing serial \(ledger.serial), which is not newer than the stored \(expected.serial); pass --force to do so")
            }
        }
        let (condition, current) = try await writeCondition(expected)
        // Only the run headers are needed: the journal is scanned, not held (at a million operations it is
        // several times the size of the state).
        let names = try await attempt("listing the journal") { try await storage.list(prefix: layout.journal) }
        var merged = Set<String>()
        for name in names {
            _ = try await attempt("reading the journal \(layout.locate(name))") {
                try await storage.forEachLine(name) { StateAssembly.addRun($0, to: &merged) }
            }
        }
        let written: PutState
        do {
            written = try await attempt("writing the state") {
                try await putState(ledger, mergedRuns: merged, condition: condition, current: current, force: force)
            }
        } catch ObjectStorageError.preconditionFailed {
            throw conflict(expected: expected, found: try? await storedVersion())
        }
        do {
            _ = try await attempt("recording the serial") {
                try await storage.put(layout.serial, StateAssembly.serialRecord(ledger), ifGenerationMatch: nil)
            }
        } catch {
            // The state is written; a stale record only means a rollback of this write would go unnoticed.
            guard layout.medium == .bucket else { throw error }
            warn("\(layout.locate(layout.serial)): could not record the serial (\(error)); the next write records it")
        }
        // The state now holds what the journal did, and names its runs in case a delete is lost.
        for name in names {
            do {
                try await storage.delete(name, ifGenerationMatch: nil)
            } catch ObjectStorageError.notFound {
                continue
            } catch {
                warn("\(layout.locate(name)): could not remove the merged journal (\(error)); it will be skipped when read")
            }
        }
        await removeObsolete(written.obsolete)
        return stamped(StateVersion(lineage: ledger.lineage, serial: ledger.serial), written.generation)
    }

    /// The generation the write is conditional on: the one `expected` carries, or, where versions carry none,
    /// the generation of the stored state if it is still `expected` (0: nothing may be stored yet). Also the
    /// stored object where it was read (nil: not read), so the write need not read it again.
    private func writeCondition(_ expected: StateVersion?) async throws -> (Int64, StoredObject??) {
        guard let expected else { return (0, .some(nil)) }
        if let generation = expected.generation { return (Int64(generation) ?? -1, nil) }
        let stored = try await attempt("reading the state") { try await storage.get(layout.state) }
        let found = try stored.map { try StateFileFormat.version(of: $0.bytes, source: statePath) }
        guard let stored, let found, found.lineage == expected.lineage, found.serial == expected.serial else {
            throw conflict(expected: expected, found: found)
        }
        return (stored.generation, .some(stored))
    }

    private func conflict(expected: StateVersion?, found: StateVersion?) -> StateConflictError {
        StateConflictError(
            "\(displayName) changed while this run worked: it expected \(Self.describe(expected)) and found \(Self.describe(found)). "
                + layout.medium.conflictAdvice)
    }

    static func describe(_ version: StateVersion?) -> String {
        guard let version else { return "no state" }
        return "serial \(version.serial) of lineage \(version.lineage)"
    }

    // MARK: Journal

    package func openJournal(base: StateVersion, expectedBytes: Int) async throws -> any StateJournal {
        if try await journalHoldsRecords() {
            throw StateError(
                "\(journalDisplayName): holds records that are not in the state yet; nothing was sent. Run again: the next run folds them in first")
        }
        let header = JournalFormat.RunHeader(run: newLineage(), lineage: base.lineage, baseSerial: base.serial, started: clock.wallTime())
        let headerBytes = JournalFormat.encode(header)
        if let object = try await storage.openAppendable(layout.journal, reserving: expectedBytes) {
            do {
                try object.append(headerBytes)
            } catch {
                try? await storage.delete(layout.journal, ifGenerationMatch: nil)
                throw StateError("\(error); nothing was sent")
            }
            return AppendedJournal(object: object, bytes: headerBytes.count, manager: self, header: header)
        }
        let serial = String(base.serial)
        let stem = layout.journal + String(repeating: "0", count: max(0, 12 - serial.count)) + serial + "-" + header.run
        let journal = SegmentedJournal(manager: self, stem: stem, header: header)
        // Proves the medium takes writes before the first request is sent.
        try await journal.write(headerBytes)
        return journal
    }

    /// What became of the journal a run began with `header`, when that run could not write the state at its
    /// end. `present` says whether the journal's objects are still there. Gone, and the state moved on from the
    /// serial the run began on, means a later write folded it in: every write folds each journal it finds
    /// (the run that took over the lock writes before its first request). Gone while the state did not move
    /// on, or was replaced by another lineage, means nothing took its records in.
    func fate(of header: JournalFormat.RunHeader, present: () async throws -> Bool) async -> JournalFate {
        do {
            if try await present() { return .kept }
            let stored = try await attempt("reading the state") { try await storage.get(layout.state) }
            guard let stored else { return .lost(why: "the state \(statePath) is gone too") }
            let now = try StateFileFormat.version(of: stored.bytes, source: statePath)
            guard now.lineage == header.lineage else {
                return .lost(why: "the state \(statePath) was replaced by one of lineage \(now.lineage), serial \(now.serial)")
            }
            guard now.serial > header.baseSerial else {
                return .lost(
                    why: "the state \(statePath) is still at serial \(now.serial), where this run began, so the journal was removed "
                        + "without being folded in")
            }
            return .folded(base: header.baseSerial, now: now.serial)
        } catch {
            return .unknown("\(error)")
        }
    }

    /// An empty journal object (space reserved by a run that stopped before its header) holds nothing.
    private func journalHoldsRecords() async throws -> Bool {
        for name in try await attempt("listing the journal", { try await storage.list(prefix: layout.journal) }) {
            if let object = try await attempt("reading the journal", { try await storage.get(name) }), !object.bytes.isEmpty { return true }
        }
        return false
    }
}
