import ArgumentParser
import FCMEngine
import FCMViews
import Foundation
import Testing

@testable import FCMCommands
@testable import FCMCore
@testable import FCMReconcile

/// What reviewers and machines read besides the Markdown plan: device names beside redacted registrations in
/// the apply report, the project and source locations in JSON, unchanged counts that say "not read" rather
/// than a false 0, and an error document where a failed run used to print nothing.
@Suite struct ReviewDocumentTests {
    static let kiosk = Registration(value: "kiosk:APA91b" + String(repeating: "k", count: 40), kind: .token)
    static let other = Registration(value: "other:APA91b" + String(repeating: "o", count: 40), kind: .token)
    static let labeler = RegistrationLabeler(redactor: Redactor(showTokens: false), deviceNames: [kiosk: "kiosk-lobby"])

    static var desired: DesiredState {
        let place = SourceLocation(file: "fleet/topics.yaml", line: 12, column: 3)
        return DesiredState(
            project: ProjectSettings(id: "fleet-prod", senderId: "42"),
            topics: ["news": DesiredTopic(name: "news", members: [kiosk], location: place)], deviceNames: [kiosk: "kiosk-lobby"])
    }

    static let plan = Plan(topics: [TopicChange(name: "news", ownership: .additive, added: [kiosk, other], removed: [], unchanged: 7)])

    static func parse(_ json: JSONTree) throws -> [String: Any] {
        try #require(JSONSerialization.jsonObject(with: Data(json.serialized().utf8)) as? [String: Any])
    }

    @Test func theApplyReportNamesDevicesBesideRedactedRegistrations() throws {
        var report = ApplyReport()
        report.outcomes = [
            OperationOutcome(address: .topic("news"), action: .subscribe, registrations: [Self.kiosk], status: .gone(reason: "UNREGISTERED")),
            OperationOutcome(
                address: .topic("news"), action: .subscribe, registrations: [Self.other],
                status: .failed(code: "INTERNAL", message: "x", retryable: true)),
        ]
        let lines = ApplyTextRenderer(labeler: Self.labeler).render(report).problems.map(ApplyTextRenderer.line)
        #expect(
            lines[0]
                == "warning: topic/news: kiosk-lobby (kiosk:…kkkk) is no longer registered (UNREGISTERED); it was skipped: remove it from the manifest"
        )
        #expect(lines[1].hasPrefix("error: topic/news: subscribe other:…oooo: INTERNAL"))

        let document = try Self.parse(
            DocumentJSON.apply(Self.plan, report: report, labeler: Self.labeler, desired: Self.desired, state: ("s.json", 3)))
        #expect(document["project"] as? String == "fleet-prod")
        let outcomes = try #require(document["outcomes"] as? [[String: Any]])
        let gone = try #require(outcomes.first { $0["status"] as? String == "gone" })
        #expect(gone["devices"] as? [String] == ["kiosk-lobby"])
        #expect(outcomes.first { $0["status"] as? String == "failed" }?["devices"] == nil, "no names: no column of nulls")
    }

    @Test func planJSONCarriesProjectLocationsAndDeviceNamesAlignedWithRegistrations() throws {
        let document = try Self.parse(DocumentJSON.plan(Self.plan, labeler: Self.labeler, desired: Self.desired, refresh: nil))
        #expect(document["project"] as? String == "fleet-prod")
        let change = try #require((document["changes"] as? [[String: Any]])?.first)
        #expect(change["added"] as? [String] == ["kiosk:…kkkk", "other:…oooo"])
        let names = try #require(change["added_devices"] as? [Any])
        #expect(names.count == 2 && names[0] as? String == "kiosk-lobby" && names[1] is NSNull)
        #expect(change["removed_devices"] == nil)
        let location = try #require(change["location"] as? [String: Any])
        #expect(location["file"] as? String == "fleet/topics.yaml" && location["line"] as? Int == 12 && location["column"] as? Int == 3)
    }

    @Test func aChangedRefreshSaysUnchangedWasNotReadInEveryFormat() throws {
        let refresh = RefreshSummary(mode: "changed", registrationsRead: 2, registrationsKnown: 9_806, groupsRead: 0, groupsKnown: 0)
        let text = PlanTextRenderer(redactor: Redactor(showTokens: false), unchangedRead: refresh.unchangedRead).render(Self.plan)
        #expect(text[0] == "~ topic/news  +2 −0 (unchanged: not read)")
        let markdown = PlanMarkdownRenderer(labeler: Self.labeler).render(Self.plan, refresh: refresh)
        #expect(markdown.contains("<code>~ topic/news</code> update +2 −0 (unchanged: not read)</summary>"))
        let document = try Self.parse(DocumentJSON.plan(Self.plan, labeler: Self.labeler, desired: Self.desired, refresh: refresh))
        let counts = try #require((document["changes"] as? [[String: Any]])?.first?["counts"] as? [String: Any])
        #expect(counts["unchanged"] is NSNull && counts["add"] as? Int == 2)

        // A full refresh read them all: the count stands.
        let all = RefreshSummary(mode: "all", registrationsRead: 9_806, registrationsKnown: 9_806, groupsRead: 0, groupsKnown: 0)
        #expect(PlanMarkdownRenderer(labeler: Self.labeler).render(Self.plan, refresh: all).contains("+2 −0 (7 unchanged)</summary>"))
        #expect(PlanTextRenderer(redactor: Redactor(showTokens: false)).render(Self.plan)[0] == "~ topic/news  +2 −0 (7 unchanged)")
    }

    @Test func driftShowsTheProjectAndDeviceNames() throws {
        var report = DriftReport()
        report.findings = [
            DriftReport.Finding(
                category: .deadRegistrations, address: .topic("news"), action: .none, registrations: [Self.kiosk, Self.other], detail: "gone")
        ]
        let view = DriftView(report: report, labeler: Self.labeler, project: "fleet-prod")
        #expect(view.markdown(maxChars: 60_000).hasPrefix(DriftView.marker + "\n### fcmctl drift · project `fleet-prod`\n"))
        let document = try Self.parse(view.json())
        #expect(document["project"] as? String == "fleet-prod")
        let categories = try #require(document["categories"] as? [[String: Any]])
        let dead = try #require(categories.first { $0["id"] as? String == "dead_registrations" })
        let objects = try #require(dead["objects"] as? [[String: Any]])
        let names = try #require(objects.first?["devices"] as? [Any])
        #expect(names.first as? String == "kiosk-lobby" && names.last is NSNull)
    }

    @Test(arguments: ["json", "markdown", "text"])
    func aFailedRunPrintsAnErrorDocumentInItsFormat(format: String) async throws {
        let captured = Captured()
        let output = try OutputOptions.parse(["--format", format])
        await #expect(throws: ExitCode.self) {
            try await Console.$current.withValue(captured.console) {
                try await ErrorDocument.guarding("plan", output: output, showTokens: false) {
                    DiagnosticPrinter(sources: [:]).print([.error("groups.x: 21 members", at: SourceLocation(file: "f.yaml", line: 4, column: 5))])
                    throw fail("the manifest has 1 error; nothing was sent to FCM")
                }
            }
        }
        #expect(captured.err.contains("error: the manifest has 1 error; nothing was sent to FCM"), "stderr is unchanged")
        switch format {
        case "json":
            let document = try #require(JSONSerialization.jsonObject(with: Data(captured.out.utf8)) as? [String: Any])
            #expect(document["kind"] as? String == "error" && document["command"] as? String == "plan")
            #expect(document["exit_code"] as? Int == 1 && document["project"] is NSNull)
            #expect(document["message"] as? String == "the manifest has 1 error; nothing was sent to FCM")
            let diagnostics = try #require(document["diagnostics"] as? [[String: Any]])
            #expect(diagnostics.first?["line"] as? Int == 4 && diagnostics.first?["message"] as? String == "groups.x: 21 members")
        case "markdown":
            #expect(captured.out.hasPrefix("\(PlanMarkdownRenderer.marker)\n\(ErrorDocument.marker)\n### fcmctl plan failed\n"))
            #expect(captured.out.contains("**Exit code 1:** the manifest has 1 error; nothing was sent to FCM"))
            #expect(captured.out.contains("- `f.yaml:4:5` **error**: groups.x: 21 members"))
        default:
            #expect(captured.out.isEmpty, "text keeps stdout for results: stderr said it all")
        }
    }

    @Test func aRunThatShowedItsDocumentGetsNoErrorDocument() async throws {
        let captured = Captured()
        let output = try OutputOptions.parse(["--format", "json"])
        await #expect(throws: ExitCode.self) {
            try await Console.$current.withValue(captured.console) {
                try await ErrorDocument.guarding("plan", output: output, showTokens: false) {
                    try Presenter(options: output).show(
                        Presentation(text: { [] }, json: { .object([("kind", .string("plan"))]) }, markdown: { _ in "" }))
                    throw ExitCode(ExitCodes.changesPresent)
                }
            }
        }
        #expect(try JSONSerialization.jsonObject(with: Data(captured.out.utf8)) as? [String: String] == ["kind": "plan"])
    }
}
