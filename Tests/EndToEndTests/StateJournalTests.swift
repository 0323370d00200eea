import FCMCore
import FCMState
import Foundation
import Testing

/// Crash safety: completed operations are journaled as they happen and replayed on the next read.
@Suite struct StateJournalTests {
    let a = Registration(value: "a:APA91b", kind: .token)
    let b = Registration(value: "cR1rjyj4_KcAPA91bGusQ2", kind: .fid)

    @Test func journalIsReplayedAfterAKillAndClearedByAFullWrite() throws {
        let workspace = try Workspace()
        let backend = LocalStateBackend(path: workspace.statePath)
        var ledger = Ledger(lineage: "L", serial: 4)
        ledger.recordSubscription(a, topic: "old")
        try backend.write(ledger)
        try backend.append([.subscribed(topic: "news", registration: LedgerRegistration(a)), .unsubscribed(topic: "old", registration: LedgerRegistration(a))])
        try backend.append([.subscribed(topic: "news", registration: LedgerRegistration(b))])
        // The process dies in the middle of its next write: a torn line.
        let torn = FileHandle(forWritingAtPath: backend.journalPath)!
        torn.seekToEndOfFile()
        torn.write(Data(#"{"subscribed":{"registration":{"tok"#.utf8))
        try torn.close()

        let recovered = try #require(try LocalStateBackend(path: workspace.statePath).read())
        #expect(recovered.managedSubscribers(of: "news") == [a, b])
        #expect(recovered.managedSubscribers(of: "old").isEmpty)
        #expect(recovered.serial == 4)
        let attributes = try FileManager.default.attributesOfItem(atPath: backend.journalPath)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)

        try backend.write(recovered)
        #expect(!FileManager.default.fileExists(atPath: backend.journalPath))
        #expect(try LocalStateBackend(path: workspace.statePath).read() == recovered)
    }
}
