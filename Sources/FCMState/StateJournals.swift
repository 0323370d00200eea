import FCMCore
import Synchronization

/// A journal in one object the medium appends to (a file): one append per call, durable once it returns.
final class AppendedJournal: StateJournal {
    private let object: any AppendableObject
    private let written: Mutex<Int>
    private let manager: StateManager
    private let header: JournalFormat.RunHeader

    init(object: any AppendableObject, bytes: Int, manager: StateManager, header: JournalFormat.RunHeader) {
        self.object = object
        written = Mutex(bytes)
        self.manager = manager
        self.header = header
    }

    /// Still there if the journal object holds this run's header: a run that took over may have folded this
    /// one's journal and begun its own under the same name.
    func fate() async -> JournalFate {
        let (manager, name, run) = (manager, manager.layout.journal, header.run)
        return await manager.fate(of: header) {
            var runs = Set<String>()
            return try await manager.storage.forEachLine(name) { StateAssembly.addRun($0, to: &runs) } && runs.contains(run)
        }
    }

    func append(_ entries: [JournalEntry]) async throws {
        try manager.requireLeaseForJournal()
        var bytes: [UInt8] = []
        JournalFormat.encode(entries, into: &bytes)
        try object.append(bytes)
        written.withLock { $0 += bytes.count }
    }

    var bytesWritten: Int { get async { written.withLock { $0 } } }
}

/// Journal segments, where the medium cannot append (a bucket): every append is one new object, numbered
/// within the run, written before `append` returns, so the intents it holds are durable before their
/// requests are sent. The next state write folds them in and deletes them.
final class SegmentedJournal: StateJournal {
    private struct Progress {
        var sequence = 0
        var written = 0
        /// After a failed write a segment may be missing; records behind the gap would be read out of order.
        var broken: String?
    }

    private let manager: StateManager
    private let stem: String
    private let header: JournalFormat.RunHeader
    private let progress = Mutex(Progress())

    init(manager: StateManager, stem: String, header: JournalFormat.RunHeader) {
        self.manager = manager
        self.stem = stem
        self.header = header
    }

    /// Still there while any segment of this run is: the stem names the run, so another run's are not counted.
    func fate() async -> JournalFate {
        let (storage, stem) = (manager.storage, stem)
        return await manager.fate(of: header) { !(try await storage.list(prefix: stem)).isEmpty }
    }

    func append(_ entries: [JournalEntry]) async throws {
        var bytes: [UInt8] = []
        JournalFormat.encode(entries, into: &bytes)
        try await write(bytes)
    }

    func write(_ bytes: [UInt8]) async throws {
        try manager.requireLeaseForJournal()
        let name: String = try progress.withLock {
            if let broken = $0.broken { throw StateError(broken) }
            $0.sequence += 1
            let number = String($0.sequence)
            return stem + "-" + String(repeating: "0", count: max(0, 8 - number.count)) + number + ".jsonl"
        }
        let storage = manager.storage
        var failure: (any Error)?
        do {
            _ = try await manager.attempt("writing the journal segment \(name)") { try await storage.put(name, bytes, ifGenerationMatch: 0) }
        } catch ObjectStorageError.preconditionFailed {
            // A create retried after its reply was lost finds the segment there, with these very lines.
            if (try? await storage.get(name))?.bytes != bytes { failure = ObjectStorageError.preconditionFailed(name) }
        } catch {
            failure = error
        }
        if let failure {
            let message = "\(manager.layout.locate(name)): cannot write the state journal: \(failure)"
            progress.withLock { $0.broken = message }
            throw StateError(message)
        }
        progress.withLock { $0.written += bytes.count }
    }

    var bytesWritten: Int { get async { progress.withLock { $0.written } } }
}
