import FCMCore
import FCMEngine
import FCMState
import FCMTestSupport
import Foundation
import Testing

/// Issue 30, in-process against the fakes: what `import` writes validates beside the manifests given, or
/// nothing is written or recorded; a group the manifests declare is recorded from its declaration, never
/// declared twice. `Tests/cli/test_import.py` runs the environments story on the built binary and fcm-emulator.
@Suite struct ImportTests {
    static let kiosk = Registration(value: token(1, prefix: "kiosk"), kind: .token)
    static let other = Registration(value: token(2, prefix: "kiosk"), kind: .token)

    static func manifest(groups: String = "") -> String {
        """
        apiVersion: fcmctl/v1
        project: {id: acme, senderId: "123"}
        devices:
          kiosk-1: {token: "\(kiosk.value)"}
          kiosk-2: {token: "\(other.value)"}
        \(groups)
        """
    }

    func ledger(_ fake: FakeWorld) async throws -> Ledger { try await fake.store("/fake/s.json").read().ledger }

    @Test func whatWouldNotValidateBesideTheManifestsIsNeitherWrittenNorRecorded() async throws {
        let fake = FakeWorld()
        let workspace = try Workspace()
        try workspace.write(Self.manifest())
        // A topic name FCM's fake takes but the manifest language does not.
        fake.fcm.subscribe(Self.kiosk, to: "promo")
        fake.fcm.subscribe(Self.kiosk, to: "no spaces allowed")
        let output = workspace.url.appendingPathComponent("imported.yaml").path
        let result = await fake.run(["import", "subscriptions", "-f", workspace.url.path, "--state", "/fake/s.json", "-o", output])
        #expect(result.code == 1, "\(result.stderr)")
        #expect(result.stderr.contains("what import would write does not validate beside the manifests"), "\(result.stderr)")
        #expect(result.stderr.contains("\(output):"), "the error is shown at the file it would have been: \(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: output))
        #expect(try await ledger(fake).isEmpty)
    }

    @Test func aDeclaredGroupIsRecordedFromItsDeclarationAndNotWritten() async throws {
        let fake = FakeWorld()
        let workspace = try Workspace()
        try workspace.write(Self.manifest(groups: "groups:\n  family: {members: [kiosk-1, kiosk-2]}\n"))
        _ = try await fake.fcm.performGroupStep(.create([Self.kiosk, Self.other]), name: "family", key: nil)
        let common = ["-f", workspace.url.path, "--state", "/fake/s.json"]
        let output = workspace.url.appendingPathComponent("groups.yaml").path
        // --members that disagree with the declaration: the declaration is what fcmctl keeps.
        let listed = workspace.url.appendingPathComponent("members.txt")
        try "\(Self.kiosk.value)\n".write(to: listed, atomically: true, encoding: .utf8)
        let refused = await fake.run(["import", "group", "family", "--members", listed.path, "-o", output] + common)
        #expect(refused.code == 1 && refused.stderr.contains("with other members than \(listed.path) lists (1 fewer)"), "\(refused.stderr)")
        #expect(try await ledger(fake).groups.isEmpty)

        let imported = await fake.run(["import", "group", "family", "-o", output] + common)
        #expect(imported.code == 0, "\(imported.stderr)")
        #expect(!FileManager.default.fileExists(atPath: output), "nothing to write: the group is declared")
        #expect(try await ledger(fake).groups["family"]?.members == [Self.kiosk, Self.other])
        let plan = await fake.run(["plan", "--detailed-exitcode"] + common)
        #expect(plan.code == 0, "\(plan.stdout)\(plan.stderr)")
        #expect(!plan.stderr.contains("not in the state"), "\(plan.stderr)")
    }

    @Test func aLocalGroupIsNeverRecordedAsFCMs() async throws {
        let fake = FakeWorld()
        let workspace = try Workspace()
        try workspace.write(Self.manifest(groups: "groups:\n  family: {mode: local, members: [kiosk-1]}\n"))
        _ = try await fake.fcm.performGroupStep(.create([Self.kiosk]), name: "family", key: nil)
        let result = await fake.run(["import", "group", "family", "-f", workspace.url.path, "--state", "/fake/s.json"])
        #expect(result.code == 1 && result.stderr.contains("group/family is declared `mode: local`"), "\(result.stderr)")
        #expect(try await ledger(fake).groups.isEmpty)
    }

    @Test func aFileTheManifestsGivenDoNotReadIsSaidToBe() async throws {
        let fake = FakeWorld()
        let workspace = try Workspace()
        try workspace.write(Self.manifest())
        fake.fcm.subscribe(Self.kiosk, to: "promo")
        let output = workspace.url.appendingPathComponent("imported.yaml").path
        let result = await fake.run(["import", "subscriptions", "-f", workspace.manifestPath, "--state", "/fake/s.json", "-o", output])
        #expect(result.code == 0, "\(result.stderr)")
        #expect(result.stderr.contains("is not read by the manifests given (-f \(workspace.manifestPath))"), "\(result.stderr)")
        // Read with it, the plan is clean.
        let plan = await fake.run(["plan", "--detailed-exitcode", "-f", workspace.manifestPath, "-f", output, "--state", "/fake/s.json"])
        #expect(plan.code == 0, "\(plan.stdout)\(plan.stderr)")
        #expect(try await ledger(fake).topics["promo"] == [Self.kiosk])
    }

    /// Under `defaults: {ownership: authoritative}` a topic import writes is authoritative too: written with only
    /// the registrations asked about, it would remove the subscriptions of others the next plan reads.
    @Test func aWrittenTopicThatWouldRemoveWhatOthersHoldIsRefused() async throws {
        let fake = FakeWorld()
        let workspace = try Workspace()
        try workspace.write(
            Self.manifest(groups: "defaults: {ownership: authoritative}\ntopics:\n  news: [kiosk-2]\n").replacingOccurrences(
                of: "\n\n", with: "\n"))
        fake.fcm.subscribe(Self.other, to: "news")
        fake.fcm.subscribe(Self.kiosk, to: "promo")
        fake.fcm.subscribe(Self.other, to: "promo")
        let common = ["-f", workspace.url.path, "--state", "/fake/s.json"]
        let output = workspace.url.appendingPathComponent("imported.yaml").path
        let listed = workspace.url.appendingPathComponent("registrations.txt")
        try "\(Self.kiosk.value)\n".write(to: listed, atomically: true, encoding: .utf8)
        let refused = await fake.run(["import", "subscriptions", "--registrations", listed.path, "-o", output] + common)
        #expect(refused.code == 1, "\(refused.stderr)")
        #expect(refused.stderr.contains("the next plan would remove 1 subscription the apps made"), "\(refused.stderr)")
        #expect(refused.stderr.contains("topic/promo (authoritative declared at \(output):"), "\(refused.stderr)")
        #expect(refused.stderr.contains("kiosk-2"), "\(refused.stderr)")
        #expect(!FileManager.default.fileExists(atPath: output))
        #expect(try await ledger(fake).isEmpty)
        // Asked about every device, the topic declares both: nothing to remove, and the plan is clean.
        let imported = await fake.run(["import", "subscriptions", "-o", output] + common)
        #expect(imported.code == 0, "\(imported.stderr)")
        #expect(try await ledger(fake).topics["promo"] == [Self.kiosk, Self.other])
        let plan = await fake.run(["plan", "--detailed-exitcode"] + common)
        #expect(plan.code == 0, "\(plan.stdout)\(plan.stderr)")
        #expect(fake.fcm.topics(of: Self.other) == ["news", "promo"])
    }
}
