import FCMCore
import FCMEngine
import FCMState
import FCMTestSupport
import FCMViews
import Foundation
import Testing

/// Issue 23: a state belongs to one project. A shared base plus one directory per environment, in-process
/// against the fakes: a state of another project is refused before FCM is read, and the default state of
/// several manifest directories is not guessed. `Tests/cli/test_project_bound_state.py` runs the same story
/// on the built binary against fcm-emulator.
@Suite struct ProjectBindingTests {
    static let base = """
        topics:
          fleet-news:
            members: {selector: {role: kiosk}}

        """

    static func environment(_ name: String, sender: String, state: String? = nil) -> String {
        """
        apiVersion: fcmctl/v1
        project: {id: acme-\(name), senderId: "\(sender)"}
        \(state.map { "state: {path: \($0)}\n" } ?? "")devices:
          \(name)-kiosk-1: {token: "\(token(1, prefix: name))", labels: {role: kiosk}}
          \(name)-kiosk-2: {token: "\(token(2, prefix: name))", labels: {role: kiosk}}

        """
    }

    /// base/, dev/ and prod/ under a workspace; returns the workspace and the directories' paths.
    static func layout(devState: String? = nil) throws -> (Workspace, base: String, dev: String, prod: String) {
        let workspace = try Workspace()
        for directory in ["base", "dev", "prod"] {
            try FileManager.default.createDirectory(at: workspace.url.appendingPathComponent(directory), withIntermediateDirectories: true)
        }
        try workspace.write(base, to: "base/topics.yaml")
        try workspace.write(environment("dev", sender: "111111111111", state: devState), to: "dev/project.yaml")
        try workspace.write(environment("prod", sender: "222222222222"), to: "prod/project.yaml")
        let path = { (name: String) in workspace.url.appendingPathComponent(name).path }
        return (workspace, path("base"), path("dev"), path("prod"))
    }

    @Test func aStateOfAnotherProjectIsRefusedBeforeFCMIsRead() async throws {
        let fake = FakeWorld()
        let (workspace, base, dev, prod) = try Self.layout()
        defer { withExtendedLifetime(workspace) {} }
        #expect(await fake.run(["apply", "--auto-approve", "-f", base, "-f", dev, "--state", "/fake/dev.json"]).code == 0)
        let stored = try await fake.store("/fake/dev.json").read()
        #expect(stored.ledger.project == ProjectBinding(id: "acme-dev", senderId: "111111111111"))
        let requests = fake.fcm.requests.count
        let prodOnDev = ["-f", base, "-f", prod, "--state", "/fake/dev.json"]
        for command in [["plan"], ["apply", "--auto-approve"], ["drift"], ["import", "subscriptions"], ["state", "rm", "topic/fleet-news"]] {
            let refused = await fake.run(command + prodOnDev)
            #expect(refused.code == 1, "\(command): \(refused.stderr)")
            // The fake store's name is "memory"; on disk it is the path (Tests/cli/test_project_bound_state.py).
            let named =
                "the state memory belongs to project acme-dev (sender 111111111111), but the manifest is for project acme-prod "
                + "(sender 222222222222)"
            #expect(refused.stderr.contains(named), "\(command): \(refused.stderr)")
            #expect(refused.stderr.contains("Pass --state PATH with this environment's own state"), "\(refused.stderr)")
        }
        #expect(fake.fcm.requests.count == requests, "nothing read from FCM, nothing sent")
        let after = try await fake.store("/fake/dev.json").read()
        #expect(after.version == stored.version && after.ledger == stored.ledger)
    }

    @Test func aSavedPlanAppliedToAnotherProjectsStateIsExitFive() async throws {
        let fake = FakeWorld()
        let (workspace, base, dev, prod) = try Self.layout()
        #expect(await fake.run(["apply", "--auto-approve", "-f", base, "-f", dev, "--state", "/fake/dev.json"]).code == 0)
        let planFile = workspace.url.appendingPathComponent("prod.plan").path
        #expect(await fake.run(["plan", "-out", planFile, "-f", base, "-f", prod, "--state", "/fake/prod.json"]).code == 0)
        let saved = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: planFile))) as? [String: Any]
        #expect((saved?["project"] as? [String: Any])?["id"] as? String == "acme-prod")
        let requests = fake.fcm.requests.count
        let refused = await fake.run(["apply", planFile, "-f", base, "-f", prod, "--state", "/fake/dev.json"])
        #expect(refused.code == 5, "\(refused.stderr)")
        #expect(refused.stderr.contains("the saved plan is refused: the state memory belongs to project acme-dev"), "\(refused.stderr)")
        #expect(refused.stderr.contains("the manifest is for project acme-prod"), "\(refused.stderr)")
        #expect(fake.fcm.requests.count == requests)
        // Its own state takes it.
        let own = await fake.run(["apply", "--auto-approve", planFile])
        #expect(own.code == 0, "\(own.stderr)")
    }

    @Test func aStateWithoutAProjectIsBoundByTheNextApply() async throws {
        let fake = FakeWorld()
        let (workspace, base, dev, _) = try Self.layout()
        defer { withExtendedLifetime(workspace) {} }
        let common = ["-f", base, "-f", dev, "--state", "/fake/old.json"]
        #expect(await fake.run(["apply", "--auto-approve"] + common).code == 0)
        // What an fcmctl before the binding left: the same records, no project.
        let store = fake.store("/fake/old.json")
        let applied = try await store.read()
        var old = applied.ledger
        old.project = ProjectBinding()
        old.serial += 1
        _ = try await store.write(old, replacing: applied.version)

        let apply = await fake.run(["apply", "--auto-approve"] + common)
        #expect(apply.code == 0, "\(apply.stderr)")
        #expect(apply.stderr.contains("records no project"), "\(apply.stderr)")
        #expect(fake.fcm.mutatingRequests.count == 2, "nothing to change: only the two subscriptions of the first apply")
        let bound = try await store.read()
        #expect(bound.ledger.project == ProjectBinding(id: "acme-dev", senderId: "111111111111"))
        #expect(bound.ledger.topics == old.topics && bound.version?.serial == old.serial + 1)
    }

    @Test func severalManifestDirectoriesNeedTheirStateNamed() async throws {
        let fake = FakeWorld()
        let (workspace, base, dev, prod) = try Self.layout(devState: "state/dev.json")
        let guessed = await fake.run(["plan", "-f", base, "-f", prod])
        #expect(guessed.code == 1)
        #expect(
            guessed.stderr.contains("(\(base)/.fcmctl/state.json, \(prod)/.fcmctl/state.json)")
                && guessed.stderr.contains("Pass --state PATH"), "\(guessed.stderr)")
        #expect(fake.fcm.requests.isEmpty)
        // Named on the command line, or in the environment's manifest: no ambiguity.
        #expect(await fake.run(["plan", "-f", base, "-f", prod, "--state", "/fake/prod.json"]).code == 0)
        let declared = await fake.run(["apply", "--auto-approve", "-f", base, "-f", dev])
        #expect(declared.code == 0, "\(declared.stderr)")
        let devState = workspace.url.appendingPathComponent("dev/state/dev.json").path
        #expect(try await fake.store(devState).read().version != nil, "the manifest's state: was used")
        // Files of one directory share its default state: no ambiguity.
        try workspace.write(Self.base, to: "prod/topics.yaml")
        let oneDirectory = await fake.run(["plan", "-f", prod + "/project.yaml", "-f", prod + "/./topics.yaml"])
        #expect(oneDirectory.code == 0, "\(oneDirectory.stderr)")
    }
}
