import FCMCore
import FCMEngine
import FCMState
import FCMTestSupport
import Foundation
import Testing

/// `apply` without a saved plan subscribes registrations it has never seen without reading them first, when
/// nothing the run could remove depends on them (`UnreadCreates`); `plan` still reads every one. In-process,
/// against the in-memory FCM, which logs each read as `GET subscriptions`.
@Suite struct UnreadCreateTests {
    let state = "/fake/unread.json"

    func reads(_ fake: FakeWorld) -> Int { fake.fcm.requests.filter { $0.method == "GET" && $0.what == "subscriptions" }.count }

    func registration(_ index: Int) -> Registration { Registration(value: token(index, prefix: "k"), kind: .token) }

    /// Devices k1...kN by name; `topics`: topic → device numbers; `authoritative` topics say so.
    func manifest(devices: [Int], topics: [String: [Int]], authoritative: Set<String> = []) -> String {
        var text = "project: {id: p, senderId: \"42\"}\ndevices:\n"
        for index in devices { text += "  k\(index): {token: \"\(token(index, prefix: "k"))\"}\n" }
        text += "topics:\n"
        for (name, members) in topics.sorted(by: { $0.key < $1.key }) {
            text += "  \(name):\n" + (authoritative.contains(name) ? "    ownership: authoritative\n" : "")
            text += "    members: [\(members.map { "k\($0)" }.joined(separator: ", "))]\n"
        }
        return text
    }

    func common(_ workspace: Workspace) -> [String] { ["-f", workspace.manifestPath, "--state", state] }

    @Test func aFirstApplyReadsNoRegistrationWhilePlanReadsEveryOne() async throws {
        let fake = FakeWorld()
        let workspace = try Workspace()
        try workspace.write(manifest(devices: [1, 2, 3], topics: ["news": [1, 2, 3], "sport": [1]]))
        let first = await fake.run(["apply", "--auto-approve"] + common(workspace))
        #expect(first.code == 0, "\(first.stderr)")
        #expect(reads(fake) == 1, "one read answers for the credentials and the project")
        #expect(first.stderr.contains("Not reading 2 new registrations first"), "\(first.stderr)")
        #expect(fake.fcm.topics(of: registration(1)) == ["news", "sport"])
        #expect(try await fake.store(state).read().ledger.managedSubscribers(of: "news") == Set([1, 2, 3].map(registration)))

        // Two more devices: the three fcmctl knows are read as before, and one of the new ones.
        try workspace.write(manifest(devices: [1, 2, 3, 4, 5], topics: ["news": [1, 2, 3, 4, 5], "sport": [1]]))
        #expect(await fake.run(["apply", "--auto-approve"] + common(workspace)).code == 0)
        #expect(reads(fake) == 1 + 3 + 1)
        #expect(fake.fcm.topics(of: registration(5)) == ["news"])
        // plan, the pull request's check, reads every registration.
        #expect(await fake.run(["plan", "--detailed-exitcode"] + common(workspace)).code == 0)
        #expect(reads(fake) == 5 + 5)
    }

    @Test func aSubscriptionFCMAlreadyHeldIsReportedApartAndNeverRemoved() async throws {
        let fake = FakeWorld()
        let workspace = try Workspace()
        fake.fcm.subscribe(registration(2), to: "news")
        try workspace.write(manifest(devices: [1, 2], topics: ["news": [1, 2]]))
        let applied = await fake.run(["apply", "--auto-approve", "--format", "json"] + common(workspace))
        #expect(applied.code == 0, "\(applied.stderr)")
        let document = try #require(try JSONSerialization.jsonObject(with: Data(applied.stdout.utf8)) as? [String: Any])
        let result = try #require(document["result"] as? [String: Any])
        #expect(result["operations_done"] as? Int == 1)
        #expect(result["already_subscribed"] as? Int == 1)
        #expect(result["requests"] as? Int == 1)
        let outcomes = try #require(document["outcomes"] as? [[String: Any]])
        #expect(outcomes.map { $0["status"] as? String } == ["already_subscribed"])
        #expect(outcomes.first?["devices"] as? [String] == ["k2"])
        #expect(try await fake.store(state).read().ledger.managedSubscribers(of: "news") == [registration(1)])

        try workspace.write(manifest(devices: [1, 2], topics: ["news": [1]]))
        #expect(await fake.run(["apply", "--auto-approve"] + common(workspace)).code == 0)
        #expect(fake.fcm.topics(of: registration(2)) == ["news"], "not fcmctl's: never removed")
        #expect(!fake.fcm.mutatingRequests.contains { $0.method == "DELETE" })
    }

    @Test func aNewTokenFCMDoesNotKnowFailsItsOwnCreatesAndNothingElseChanges() async throws {
        let fake = FakeWorld()
        let workspace = try Workspace()
        try workspace.write(manifest(devices: [1], topics: ["news": [1], "sport": [1]]))
        #expect(await fake.run(["apply", "--auto-approve"] + common(workspace)).code == 0)
        fake.fcm.uninstall(registration(9))
        try workspace.write(manifest(devices: [1, 2, 9], topics: ["news": [1, 2, 9], "sport": [1, 9]]))
        let before = fake.fcm.mutatingRequests.count
        let applied = await fake.run(["apply", "--auto-approve"] + common(workspace))
        #expect(applied.code == 3, "a partial apply: \(applied.stderr)")
        #expect(applied.stderr.contains("error: topic/news: subscribe k9 ("), "\(applied.stderr)")
        #expect(applied.stderr.contains("FCM does not know this registration, which was not read before this create"), "\(applied.stderr)")
        #expect(!applied.stderr.contains(token(9, prefix: "k")), "redacted")
        let sent = fake.fcm.mutatingRequests.dropFirst(before)
        #expect(sent.count == 3, "k2's create and k9's two: \(sent)")
        #expect(!sent.contains { $0.method == "DELETE" })
        #expect(fake.fcm.topics(of: registration(1)) == ["news", "sport"])
        #expect(fake.fcm.topics(of: registration(2)) == ["news"])
        // The pull request's check still refuses it before anything is sent: the failed creates did not make it one
        // fcmctl knows (no record, no device name in the state).
        let refused = await fake.run(["plan"] + common(workspace))
        #expect(refused.code == 1, "\(refused.stderr)")
        #expect(refused.stdout.hasPrefix("Refused: this plan will not be applied"), "\(refused.stdout)")
        #expect(refused.stderr.contains("device k9's registration"), "\(refused.stderr)")
        #expect(fake.fcm.mutatingRequests.count == before + 3)
        let ledger = try await fake.store(state).read().ledger
        #expect(ledger.deviceNames[registration(9)] == nil && ledger.deviceNames[registration(2)] == "k2")
        #expect(!ledger.subscribedRegistrations.contains(registration(9)))
    }

    /// A rotation leaves the old token's subscriptions undeclared: a removal depends on the new one, so apply
    /// reads it first and refuses the plan before anything is sent.
    @Test func aRotationToATokenFCMDoesNotKnowIsRefusedBeforeAnythingIsSent() async throws {
        let fake = FakeWorld()
        let workspace = try Workspace()
        let working = token(2, prefix: "k2")
        let new = String(working.dropLast(3))
        let rotation = { (registration: String) in
            "project: {id: p, senderId: \"42\"}\ndevices:\n  k2: {token: \"\(registration)\"}\ntopics:\n  news: [k2]\n  alerts: [k2]\n"
        }
        try workspace.write(rotation(working))
        #expect(await fake.run(["apply", "--auto-approve"] + common(workspace)).code == 0)
        fake.fcm.uninstall(Registration(value: new, kind: .token))
        try workspace.write(rotation(new))
        let before = fake.fcm.mutatingRequests.count
        let readsBefore = reads(fake)
        let applied = await fake.run(["apply", "--auto-approve"] + common(workspace))
        #expect(applied.code == 1, "\(applied.stderr)")
        #expect(applied.stdout.contains("the device's registration changed (rotation)"), "\(applied.stdout)")
        #expect(reads(fake) == readsBefore + 2, "both tokens read")
        #expect(fake.fcm.mutatingRequests.count == before)
        #expect(fake.fcm.topics(of: Registration(value: working, kind: .token)) == ["alerts", "news"])
    }

    /// The one registration read first is unknown to FCM: the run reads every registration, as plan does, and
    /// refuses before anything is sent.
    @Test func whenTheRegistrationReadFirstIsUnknownEveryOneIsRead() async throws {
        let fake = FakeWorld()
        let workspace = try Workspace()
        fake.fcm.uninstall(registration(1))
        try workspace.write(manifest(devices: [1, 2, 3], topics: ["news": [1, 2, 3]]))
        let applied = await fake.run(["apply", "--auto-approve"] + common(workspace))
        #expect(applied.code == 1, "\(applied.stderr)")
        #expect(applied.stderr.contains("device k1's registration"), "\(applied.stderr)")
        #expect(reads(fake) == 1 + 3)
        #expect(fake.fcm.mutatingRequests.isEmpty)
    }

    @Test func anAuthoritativeTopicMakesApplyReadEveryRegistration() async throws {
        let fake = FakeWorld()
        let workspace = try Workspace()
        try workspace.write(manifest(devices: [1, 2], topics: ["news": [1, 2], "all": [1]], authoritative: ["all"]))
        #expect(await fake.run(["apply", "--auto-approve"] + common(workspace)).code == 0)
        #expect(reads(fake) == 2)
    }

    /// What `UnreadCreates.forApply` leaves unread: new registrations, and only while nothing removable depends on them.
    @Test func nothingIsLeftUnreadWhenARemovalCouldDependOnIt() {
        let known = registration(1)
        let new = registration(2)
        let member = registration(3)
        func desired(_ api: TopicAPI = .v1, news: Ownership = .additive, groups: [String: Set<Registration>] = [:]) -> DesiredState {
            var desired = DesiredState(
                project: ProjectSettings(id: "p", senderId: "42", topicAPI: api),
                topics: ["news": DesiredTopic(name: "news", members: [known, new, member], ownership: news)])
            for (name, members) in groups { desired.groups[name] = DesiredGroup(name: name, members: members) }
            return desired
        }
        var ledger = Ledger(lineage: "L", serial: 1)
        ledger.recordSubscription(known, topic: "news")
        let all: Set<Registration> = [known, new, member]
        #expect(UnreadCreates.forApply(desired: desired(), ledger: ledger, candidates: all) == [new, member])
        #expect(UnreadCreates.forApply(desired: desired(.iid), ledger: ledger, candidates: all).isEmpty, "IID answers no 409")
        #expect(UnreadCreates.forApply(desired: desired(news: .authoritative), ledger: ledger, candidates: all).isEmpty)
        // A group declared as recorded: its members are read (FCM drops an unknown member silently), the rest not.
        var grouped = ledger
        grouped.recordGroup("fam", members: [member])
        #expect(UnreadCreates.forApply(desired: desired(groups: ["fam": [member]]), ledger: grouped, candidates: all) == [new])
        #expect(UnreadCreates.forApply(desired: desired(groups: ["fam": [member, new]]), ledger: grouped, candidates: all).isEmpty)
        var undeclared = ledger
        undeclared.recordSubscription(known, topic: "old")
        #expect(UnreadCreates.forApply(desired: desired(), ledger: undeclared, candidates: all).isEmpty)
        var pending = ledger
        pending.pending.subscriptions["news"] = [member]
        #expect(UnreadCreates.forApply(desired: desired(), ledger: pending, candidates: all).isEmpty)
    }

    @Test func aSavedPlanLeavesUnreadOnlyCreatesInAdditiveTopicsWithoutARecord() {
        let (a, b, c, d) = (registration(1), registration(2), registration(3), registration(4))
        var ledger = Ledger(lineage: "L", serial: 1)
        ledger.recordSubscription(c, topic: "news")
        ledger.pending.subscriptions["news"] = [d]
        let plan = Plan(topics: [
            TopicChange(name: "all", ownership: .authoritative, added: [b], removed: [], unchanged: 0),
            TopicChange(name: "news", ownership: .additive, added: [a, b, c, d], removed: [], unchanged: 0),
            TopicChange(name: "sport", ownership: .additive, added: [c], removed: [], unchanged: 0),
            TopicChange(name: "weather", ownership: .additive, added: [], removed: [c], unchanged: 0),
        ])
        #expect(UnreadCreates.forSavedPlan(plan, ledger: ledger, topicAPI: .v1) == [a])
        #expect(UnreadCreates.forSavedPlan(plan, ledger: ledger, topicAPI: .iid).isEmpty)
    }
}
