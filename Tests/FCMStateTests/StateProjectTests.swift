import FCMCore
import FCMTestSupport
import Foundation
import Testing

@testable import FCMState

/// The project a state belongs to (format version 4): written, read back, kept through journal replay on
/// both stores, and added to an older state by its next write.
@Suite struct StateProjectTests {
    let a = Registration(value: "a:APA91b", kind: .token)
    let b = Registration(value: "b:APA91b", kind: .token)
    let dev = ProjectBinding(id: "acme-dev", senderId: "111111111111")

    func ledger(project: ProjectBinding = ProjectBinding()) -> Ledger {
        var ledger = Ledger(lineage: "L", serial: 3)
        ledger.recordSubscription(a, topic: "news")
        ledger.project = project
        return ledger
    }

    /// The bytes an fcmctl of format version 3 wrote for `ledger`: no project, version 3, its checksum.
    static func versionThree(_ ledger: Ledger) throws -> [UInt8] {
        var unbound = ledger
        unbound.project = ProjectBinding()
        let text = String(decoding: StateFileFormat.encode(unbound), as: UTF8.self)
        let end = try #require(text.range(of: StateFileFormat.checksumField))
        let body = Array(text[..<end.lowerBound].replacingOccurrences(of: "{\n\"version\": 4,", with: "{\n\"version\": 3,").utf8)
        #expect(body.starts(with: Array("{\n\"version\": 3,".utf8)))
        return body + Array("\(StateFileFormat.checksumField)\(StateFileFormat.checksum(body[...]))\"\n}\n".utf8)
    }

    @Test(arguments: [
        ProjectBinding(id: "acme-dev", senderId: "111111111111"), ProjectBinding(id: "acme-dev"), ProjectBinding(senderId: "111111111111"),
    ])
    func theProjectRoundTrips(project: ProjectBinding) throws {
        let bytes = StateFileFormat.encode(ledger(project: project))
        let decoded = try StateFileFormat.decode(bytes, source: "s.json")
        #expect(decoded.formatVersion == 4)
        #expect(decoded.ledger.project == project)
        #expect(decoded.ledger == ledger(project: project))
        // Lineage and serial are still read from the head, ahead of the project.
        #expect(StateFileFormat.headVersion(bytes) == StateVersion(lineage: "L", serial: 3))
    }

    @Test func theProjectFollowsTheSerialAndKnownPartsOnly() {
        let text = String(decoding: StateFileFormat.encode(ledger(project: ProjectBinding(id: "acme-dev"))), as: UTF8.self)
        #expect(text.hasPrefix("{\n\"version\": 4,\n\"lineage\": \"L\",\n\"serial\": 3,\n\"project\": {\"id\": \"acme-dev\"},\n"), "\(text)")
        let unbound = String(decoding: StateFileFormat.encode(ledger()), as: UTF8.self)
        #expect(!unbound.contains("\"project\""))
    }

    @Test func aVersionThreeStateHasNoProject() throws {
        let decoded = try StateFileFormat.decode(try Self.versionThree(ledger(project: dev)), source: "s.json")
        #expect(decoded.formatVersion == 3)
        #expect(decoded.ledger.project.isEmpty)
        #expect(decoded.ledger.topics == ledger().topics)
    }

    @Test(arguments: [
        (#""project": "acme-dev""#, "field 'project' is not an object"),
        (#""project": {}"#, "field 'project' names neither an id nor a sender_id"),
        (#""project": {"id": ""}"#, "field 'project.id' is not a non-empty string"),
        (#""project": {"id": 7}"#, "field 'project.id' is not a non-empty string"),
        (#""project": {"id": "acme-dev", "number": "1"}"#, "field 'project.number' is not a field of a state's project"),
    ])
    func aDamagedProjectIsAnError(field: String, expected: String) {
        // Read by its fields (as `state push` reads a file): the checksum would refuse any edit before them.
        let text = #"{"version":4,"lineage":"L","serial":1,"groups":{},"topics":{},"# + field + "}"
        #expect {
            try StateFileFormat.decode(Array(text.utf8), source: "dir/state.json", checkingChecksum: false)
        } throws: { error in
            "\(error)".hasPrefix("dir/state.json:") && "\(error)".contains(expected)
        }
    }

    @Test func aVersionThreeFileIsUpgradedAndBoundByTheNextLocalWrite() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("fcmctl-project-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("state.json").path
        try Data(try Self.versionThree(ledger())).write(to: URL(fileURLWithPath: path))
        let store = LocalStateStore(path: path)
        let snapshot = try await store.read()
        #expect(snapshot.ledger.project.isEmpty && snapshot.needsWrite)
        #expect(snapshot.warnings.contains { $0.contains("state format version 3 will be upgraded to 4") }, "\(snapshot.warnings)")
        var next = snapshot.ledger
        next.bind(to: dev)
        #expect(!next.hasSameRecords(as: snapshot.ledger), "binding alone is a change worth writing")
        next.serial = try next.nextSerial()
        _ = try await store.write(next, replacing: snapshot.version)
        let stored = try StateFileFormat.decode(Array(try Data(contentsOf: URL(fileURLWithPath: path))), source: path)
        #expect(stored.formatVersion == 4 && stored.ledger.project == dev)
        #expect(stored.ledger.topics == snapshot.ledger.topics, "no record lost in the upgrade")
    }

    @Test func journalReplayKeepsTheProjectOnTheLocalStore() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("fcmctl-project-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try await replayKeepsTheProject(LocalStateStore(path: directory.appendingPathComponent("state.json").path))
    }

    @Test func journalReplayKeepsTheProjectOnTheGCSStore() async throws {
        try await replayKeepsTheProject(
            GCSStateStore(storage: MemoryObjectStorage(), prefix: "prod/", version: "test", pollInterval: .milliseconds(10)))
    }

    /// A run killed after its intents and completions were journaled: the replayed state is still the
    /// project's, and the write that folds the journal in keeps it.
    func replayKeepsTheProject(_ store: any StateStore) async throws {
        let version = try await store.write(ledger(project: dev), replacing: nil)
        let journal = try await store.openJournal(base: version, expectedBytes: 800)
        try await journal.append([
            .intent(id: 1, .subscribed(topic: "news", registration: b)), .intent(id: 2, .subscribed(topic: "sport", registration: b)),
        ])
        try await journal.append([.done(ids: [1])])
        let replayed = try await store.read()
        #expect(replayed.replayedEntries > 0)
        #expect(replayed.ledger.project == dev)
        #expect(replayed.ledger.managedSubscribers(of: "news") == [a, b])
        #expect(replayed.ledger.pending.subscriptions["sport"] == [b])
        var next = replayed.ledger
        next.serial = try next.nextSerial()
        _ = try await store.write(next, replacing: replayed.version)
        let folded = try await store.read()
        #expect(folded.replayedEntries == 0)
        #expect(folded.ledger.project == dev)
        #expect(folded.ledger.managedSubscribers(of: "news") == [a, b])
    }
}
