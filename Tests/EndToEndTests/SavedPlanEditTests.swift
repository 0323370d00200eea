import FCMCommands
import FCMCore
import FCMEngine
import FCMTestSupport
import FCMViews
import Foundation
import Testing

/// A plan file passes through CI storage, so `apply FILE` checks it as a whole: each edit below is refused
/// (exit 5, or 1 for a file that is not a plan) with nothing sent. Each edit is tried as a naive edit (the
/// digest no longer matches) and, where the digest is the only thing that would catch it, also re-sealed
/// with a recomputed digest, as someone who knows the format would: then the re-derivation has to catch it.
/// docs/state.md lists the same edits and their exits.
@Suite struct SavedPlanEditTests {
    typealias Object = [String: Any]

    struct Edit {
        var name: String
        var reseal: Bool
        var code: Int32 = 5
        var says: String
        var arguments: [String] = []
        var change: (inout Object) -> Void
    }

    static let manifestBefore = manifest(news: [1, 2], group: [3])
    static let manifestAfter = manifest(news: [2, 4], group: [3, 5])

    static func manifest(news: [Int], group: [Int]) -> String {
        "project: {id: p, senderId: \"42\"}\ngroups:\n  fam:\n    members: [\(group.map { "\"\(token($0))\"" }.joined(separator: ", "))]\n"
            + "topics:\n  news: [\(news.map { "\"\(token($0))\"" }.joined(separator: ", "))]\n"
    }

    static func registration(_ index: Int) -> Object { ["token": token(index)] }

    static func topics(_ plan: inout Object, _ body: (inout [Object]) -> Void) {
        var list = plan["topics"] as? [Object] ?? []
        body(&list)
        plan["topics"] = list
    }

    static func groups(_ plan: inout Object, _ body: (inout [Object]) -> Void) {
        var list = plan["groups"] as? [Object] ?? []
        body(&list)
        plan["groups"] = list
    }

    static func observations(_ plan: inout Object, _ body: (inout Object) -> Void) {
        var observations = plan["observations"] as? Object ?? [:]
        body(&observations)
        plan["observations"] = observations
    }

    /// The edits of issue 24 point 3, and the fields next to them that change what runs.
    static var edits: [Edit] {
        var edits: [Edit] = []
        let appTopic: (inout Object) -> Void = { plan in
            // The app subscribed token 2 to app-own itself: an authoritative entry would remove it.
            topics(&plan) {
                $0.append(["name": "app-own", "ownership": "authoritative", "added": [], "removed": [registration(2)], "unchanged": 0])
            }
        }
        edits.append(Edit(name: "added topic entry", reseal: false, says: "topics was edited", change: appTopic))
        edits.append(Edit(name: "added topic entry, re-sealed", reseal: true, says: "topic/app-own differs", change: appTopic))
        let injected: (inout Object) -> Void = { plan in
            topics(&plan) { list in
                var added = list[0]["added"] as? [Object] ?? []
                added += (100..<150).map(registration)
                list[0]["added"] = added
            }
        }
        edits.append(Edit(name: "50 injected subscriptions", reseal: false, says: "topics was edited", change: injected))
        edits.append(Edit(name: "50 injected subscriptions, re-sealed", reseal: true, says: "topic/news differs", change: injected))
        edits.append(Edit(name: "maxRemovals deleted", reseal: false, says: "limits was edited") { $0["maxRemovals"] = nil })
        edits.append(Edit(name: "maxRemovals raised", reseal: false, says: "limits was edited") { $0["maxRemovals"] = 100_000 })
        let removeAll: (inout Object) -> Void = { plan in
            groups(&plan) { $0[0]["steps"] = [["operation": "remove", "registrations": [registration(3)]]] }
        }
        edits.append(Edit(name: "group step removes every member", reseal: false, says: "groups was edited", change: removeAll))
        edits.append(Edit(name: "group step removes every member, re-sealed", reseal: true, says: "group/fam differs", change: removeAll))
        edits.append(
            Edit(name: "group action turned into delete, re-sealed", reseal: true, says: "group/fam differs") { plan in
                groups(&plan) { $0[0]["action"] = "delete" }
            })
        edits.append(
            Edit(name: "group step operation unknown, re-sealed", reseal: true, says: "unknown step 'nuke'") { plan in
                groups(&plan) { $0[0]["steps"] = [["operation": "nuke", "registrations": [registration(5)]]] }
            })
        edits.append(Edit(name: "fingerprints emptied", reseal: false, says: "observations was edited") { $0["fingerprints"] = Object() })
        edits.append(
            Edit(name: "fingerprints emptied, re-sealed", reseal: true, says: "its fingerprints are not those of its observations") {
                $0["fingerprints"] = Object()
            })
        edits.append(Edit(name: "statePath changed", reseal: false, says: "state was edited") { $0["statePath"] = "/fake/elsewhere.json" })
        edits.append(
            Edit(name: "statePath changed, re-sealed", reseal: true, says: "the state moved from serial 2 to no state") {
                $0["statePath"] = "/fake/elsewhere.json"
            })
        edits.append(
            Edit(name: "stateSerial changed, re-sealed", reseal: true, says: "the state moved from serial 1 to serial 2") { $0["stateSerial"] = 1 })
        let otherProject: (inout Object) -> Void = { plan in
            var project = plan["project"] as? Object ?? [:]
            project["id"] = "other"
            plan["project"] = project
        }
        edits.append(Edit(name: "project id changed", reseal: false, says: "project was edited", change: otherProject))
        edits.append(Edit(name: "project id changed, re-sealed", reseal: true, says: "it is for project other", change: otherProject))
        edits.append(
            Edit(name: "sender id changed, re-sealed", reseal: true, says: "but the manifest says p (sender 42") { plan in
                var project = plan["project"] as? Object ?? [:]
                project["senderId"] = "43"
                plan["project"] = project
            })
        edits.append(
            Edit(name: "an operation removed, re-sealed", reseal: true, says: "topic/news differs") { plan in
                topics(&plan) { $0[0]["removed"] = [Object]() }
            })
        edits.append(
            Edit(name: "ownership turned authoritative, re-sealed", reseal: true, says: "topic/news differs") { plan in
                topics(&plan) { $0[0]["ownership"] = "authoritative" }
            })
        edits.append(
            Edit(name: "manifest digest changed, re-sealed", reseal: true, says: "changed since the plan was made") {
                $0["manifestDigest"] = String(repeating: "0", count: 64)
            })
        edits.append(
            Edit(name: "group protection flipped, re-sealed", reseal: true, says: "its declared groups (or their protection)") {
                $0["declaredGroups"] = ["fam": true]
            })
        edits.append(
            Edit(name: "target added, re-sealed", reseal: true, says: "group/fam differs") { plan in
                var options = plan["options"] as? Object ?? [:]
                options["targets"] = ["topic/news"]
                plan["options"] = options
            })
        edits.append(
            Edit(name: "adoption turned on", reseal: false, says: "limits was edited") { plan in
                var options = plan["options"] as? Object ?? [:]
                options["adoptExisting"] = true
                plan["options"] = options
            })
        edits.append(
            Edit(name: "an observation invented, re-sealed", reseal: true, says: "1 registration(s) neither names") { plan in
                observations(&plan) { observations in
                    var list = observations["registrations"] as? [Object] ?? []
                    list.append(["token": token(77), "topics": ["news"]])
                    observations["registrations"] = list
                }
            })
        edits.append(
            Edit(name: "digest edited", reseal: false, says: "does not match its digest") {
                $0["digest"] = "sha256:" + String(repeating: "a", count: 64)
            })
        edits.append(Edit(name: "digest removed", reseal: false, says: "the plan has no digest") { $0["digest"] = nil })
        edits.append(
            Edit(name: "digest parts removed", reseal: false, says: "the file was edited after") { plan in
                plan["digestParts"] = nil
                plan["maxRemovals"] = 100_000
            })
        edits.append(Edit(name: "older format version", reseal: false, says: "plan format version 1 carries no digest") { $0["formatVersion"] = 1 })
        edits.append(
            Edit(
                name: "expected digest differs", reseal: false, says: "not the approved sha256:" + String(repeating: "b", count: 64),
                arguments: ["--expect-digest", "sha256:" + String(repeating: "b", count: 64)]
            ) { _ in })
        return edits
    }

    /// Writes `plan` edited by `edit`, re-sealing it if the edit says so.
    static func write(_ plan: Object, _ edit: Edit, to path: String) throws {
        var edited = plan
        edit.change(&edited)
        try JSONSerialization.data(withJSONObject: edited, options: [.sortedKeys]).write(to: URL(fileURLWithPath: path))
        guard edit.reseal else { return }
        var saved = try SavedPlanFile.read(path)
        try SavedPlanDigest.seal(&saved)
        try SavedPlanFile.write(saved, to: path)
    }

    @Test func everyEditOfASavedPlanIsRefusedAndNothingIsSent() async throws {
        let fake = FakeWorld()
        let workspace = try Workspace()
        let common = ["-f", workspace.manifestPath, "--state", "/fake/edits.json"]
        try workspace.write(Self.manifestBefore)
        #expect(await fake.run(["apply", "--auto-approve"] + common).code == 0)
        fake.fcm.subscribe(Registration(value: token(2), kind: .token), to: "app-own")
        try workspace.write(Self.manifestAfter)
        let planFile = workspace.url.appendingPathComponent("reviewed.plan").path
        let planned = await fake.run(["plan", "-out", planFile, "--max-removals", "3"] + common)
        #expect(planned.code == 0, "\(planned.stderr)")
        let digestLine = planned.stdout.split(separator: "\n").first { $0.hasPrefix("Plan digest: sha256:") }
        let digest = try #require(digestLine.map { String($0.dropFirst("Plan digest: ".count)) })
        #expect(digest.count == "sha256:".count + 64)
        let original = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: planFile))) as? Object)
        #expect(original["digest"] as? String == digest)

        let before = fake.fcm.mutatingRequests.count
        for (index, edit) in Self.edits.enumerated() {
            let path = workspace.url.appendingPathComponent("edit-\(index).plan").path
            try Self.write(original, edit, to: path)
            let applied = await fake.run(["apply", path, "--auto-approve"] + edit.arguments)
            #expect(applied.code == edit.code, "\(edit.name): \(applied.stderr)")
            #expect(applied.stderr.contains(edit.says), "\(edit.name): \(applied.stderr)")
            #expect(applied.stderr.contains("Nothing was sent"), "\(edit.name): \(applied.stderr)")
            #expect(fake.fcm.mutatingRequests.count == before, "\(edit.name) sent \(fake.fcm.mutatingRequests.dropFirst(before))")
        }
        let unreadable = workspace.url.appendingPathComponent("truncated.plan").path
        try Data(try Data(contentsOf: URL(fileURLWithPath: planFile)).prefix(200)).write(to: URL(fileURLWithPath: unreadable))
        let truncated = await fake.run(["apply", unreadable, "--auto-approve"])
        #expect(truncated.code == 1 && truncated.stderr.contains("not a plan written by"), "\(truncated.stderr)")
        #expect(fake.fcm.mutatingRequests.count == before)

        // No refusal wrote the state: the reviewed plan still applies, and only with its own digest.
        let applied = await fake.run(["apply", planFile, "--auto-approve", "--expect-digest", digest])
        #expect(applied.code == 0, "\(applied.stderr)")
        #expect(fake.fcm.topics(of: Registration(value: token(4), kind: .token)) == ["news"])
        #expect(fake.fcm.topics(of: Registration(value: token(2), kind: .token)) == ["news", "app-own"])
        #expect(fake.fcm.members(of: "fam") == Set([3, 5].map { Registration(value: token($0), kind: .token) }))
        #expect(await fake.run(["plan", "--detailed-exitcode"] + common).code == 0)
    }

    /// What the digest alone guards: an edit that keeps the plan consistent (an observation says a declared
    /// subscription already exists, and its operation is dropped) can only leave a change out; the approved
    /// digest refuses it too.
    @Test func aConsistentOmissionIsCaughtByTheApprovedDigest() async throws {
        let fake = FakeWorld()
        let workspace = try Workspace()
        let common = ["-f", workspace.manifestPath, "--state", "/fake/omission.json"]
        try workspace.write(Self.manifestBefore)
        #expect(await fake.run(["apply", "--auto-approve"] + common).code == 0)
        try workspace.write(Self.manifestAfter)
        let planFile = workspace.url.appendingPathComponent("reviewed.plan").path
        #expect(await fake.run(["plan", "-out", planFile] + common).code == 0)
        let original = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: planFile))) as? Object)
        let approved = try #require(original["digest"] as? String)
        let omission = Edit(name: "omission", reseal: true, says: "") { plan in
            Self.topics(&plan) {
                $0[0]["added"] = [Object]()
                $0[0]["unchanged"] = 2
            }
            Self.observations(&plan) { observations in
                observations["registrations"] = (observations["registrations"] as? [Object] ?? []).map { entry in
                    var entry = entry
                    if entry["token"] as? String == token(4) { entry["topics"] = ["news"] }
                    return entry
                }
            }
            var fingerprints = plan["fingerprints"] as? Object ?? [:]
            fingerprints["topic/news"] = nil
            plan["fingerprints"] = fingerprints
        }
        let path = workspace.url.appendingPathComponent("omission.plan").path
        try Self.write(original, omission, to: path)
        // Recompute the fingerprints the way plan does, so only the digest differs from an honest plan.
        var saved = try SavedPlanFile.read(path)
        saved.fingerprints = PlanFingerprint.facts(of: try saved.plan(), observed: try saved.observations.observedState())
        try SavedPlanDigest.seal(&saved)
        try SavedPlanFile.write(saved, to: path)

        let before = fake.fcm.mutatingRequests.count
        let refused = await fake.run(["apply", path, "--auto-approve", "--expect-digest", approved])
        #expect(refused.code == 5 && refused.stderr.contains("not the approved \(approved)"), "\(refused.stderr)")
        #expect(fake.fcm.mutatingRequests.count == before)
        let unpinned = await fake.run(["apply", path, "--auto-approve"])
        #expect(unpinned.code == 0, "\(unpinned.stderr)")
        // Left out, not added: token 4 is not subscribed, and nothing outside the reviewed plan happened.
        #expect(fake.fcm.topics(of: Registration(value: token(4), kind: .token)).isEmpty)
        #expect(fake.fcm.topics(of: Registration(value: token(1), kind: .token)).isEmpty)
        #expect(await fake.run(["plan", "--detailed-exitcode"] + common).code == 2)
    }

    func mutations(_ emulator: any EmulatorHandle, after count: Int) async throws -> [String] {
        try await emulator.requestLog().dropFirst(count).filter { $0["method"] as? String != "GET" }.compactMap { $0["endpoint"] as? String }.sorted()
    }

    /// The same on the built binary and the emulator: its request log shows no mutating request.
    @Test func theBinaryRefusesEditedPlansAndAppliesTheApprovedOne() async throws {
        let emulator = try await InProcessEmulator()
        let workspace = try Workspace()
        let env = ["FCM_EMULATOR_HOST": emulator.host]
        let common = ["-f", workspace.manifestPath, "--state", workspace.statePath]
        try workspace.write(Self.manifestBefore)
        #expect(try await CLI.runBinary(["apply", "--auto-approve"] + common, environment: env).code == 0)
        try workspace.write(Self.manifestAfter)
        let planFile = workspace.url.appendingPathComponent("pr.plan").path
        let planned = try await CLI.runBinary(["plan", "-out", planFile, "--format", "markdown"] + common, environment: env)
        #expect(planned.code == 0, "\(planned.stderr)")
        let original = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: planFile))) as? Object)
        let digest = try #require(original["digest"] as? String)
        #expect(planned.stdout.contains("Plan digest: `\(digest)`"), "\(planned.stdout)")

        let before = try await emulator.requestLog().count
        let chosen = Self.edits.filter {
            ["added topic entry, re-sealed", "50 injected subscriptions, re-sealed", "digest removed", "expected digest differs"].contains($0.name)
        }
        #expect(chosen.count == 4)
        for (index, edit) in chosen.enumerated() {
            let path = workspace.url.appendingPathComponent("edit-\(index).plan").path
            try Self.write(original, edit, to: path)
            let applied = try await CLI.runBinary(["apply", path, "--auto-approve"] + edit.arguments, environment: env)
            #expect(applied.code == 5, "\(edit.name): \(applied.stderr)")
            #expect(applied.stderr.contains(edit.says), "\(edit.name): \(applied.stderr)")
        }
        #expect(try await mutations(emulator, after: before).isEmpty)
        let applied = try await CLI.runBinary(["apply", planFile, "--auto-approve", "--expect-digest", digest], environment: env)
        #expect(applied.code == 0, "\(applied.stderr)")
        #expect(try await mutations(emulator, after: before) == ["groups.mutate", "topics.create", "topics.delete"])
    }
}
