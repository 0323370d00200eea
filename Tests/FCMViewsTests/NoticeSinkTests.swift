import ArgumentParser
import FCMEngine
import FCMViews
import Foundation
import Testing

@testable import FCMCommands
@testable import FCMCore

/// What a run says is recorded once, as values, where it arises; stderr, the JSON and Markdown error
/// documents and GitHub annotations are all rendered from those values.
@Suite struct NoticeSinkTests {
    /// Runs `body` as `plan --format FORMAT` runs its own, and returns what it printed and recorded.
    static func failedPlan(format: String, _ body: @escaping () throws -> Void) async throws -> (Captured, RunRecord) {
        let captured = Captured()
        let output = try OutputOptions.parse(["--format", format])
        let record = Box()
        await #expect(throws: ExitCode.self) {
            try await Console.$current.withValue(captured.console) {
                try await ErrorDocument.guarding("plan", output: output, showTokens: false) {
                    record.value = RunRecord.current
                    try body()
                }
            }
        }
        return (captured, try #require(record.value))
    }

    final class Box: @unchecked Sendable { var value: RunRecord? }

    static let cause = "the state names project p1, the manifest p2: refusing to mix them"

    @Test func anEngineFailureSaidOnceReadsTheSameInEveryFormat() async throws {
        let failing = { () throws -> Void in _ = try surfacingNow { throw EngineFailure(Self.cause, about: .topic("news")) } }

        let (text, record) = try await Self.failedPlan(format: "text", failing)
        #expect(text.err == "error: \(Self.cause)\n", "said once, on stderr")
        #expect(text.out.isEmpty)
        #expect(record.notices == [.error(Self.cause, about: .topic("news"))], "recorded once, as a value with its address")

        let (json, _) = try await Self.failedPlan(format: "json", failing)
        let document = try #require(JSONSerialization.jsonObject(with: Data(json.out.utf8)) as? [String: Any])
        #expect(document["message"] as? String == Self.cause)
        #expect(document["errors"] as? [String] == [Self.cause], "the failure is not counted twice")
        #expect(json.err == text.err, "stderr does not depend on the format")

        let (github, _) = try await Self.failedPlan(format: "github", failing)
        #expect(github.out == "::error::\(Self.cause)\n")

        let (markdown, _) = try await Self.failedPlan(format: "markdown", failing)
        #expect(markdown.out.contains("**Exit code 1:** \(Self.cause)\n"))
    }

    @Test func aNoticeWithAnAddressKeepsIt() async throws {
        let captured = Captured()
        let record = RunRecord()
        var console = captured.console
        console.record = record
        Console.$current.withValue(console) {
            let notices = RunStart.notices
            notices.warning("2 members of group/fam no longer registered", about: .group("fam"))
            notices("Refreshing 1 group…")
        }
        #expect(record.notices == [.warning("2 members of group/fam no longer registered", about: .group("fam")), .info("Refreshing 1 group…")])
        #expect(captured.err == "warning: 2 members of group/fam no longer registered\nRefreshing 1 group…\n")
        #expect(record.errors.isEmpty, "a warning is not a failure")
    }

    @Test func eachProblemOfOneFailureIsItsOwnError() async throws {
        let desired = DesiredState(project: ProjectSettings(id: "p", senderId: "42"))
        let targeting = PlanTargeting(targets: [.topic("nws"), .group("x")])
        let (captured, record) = try await Self.failedPlan(format: "json") {
            _ = try surfacingNow { try TargetCheck.check(targeting, desired: desired, ledger: Ledger()) }
        }
        #expect(record.errors.map(\.address) == [.topic("nws"), .group("x")])
        let document = try #require(JSONSerialization.jsonObject(with: Data(captured.out.utf8)) as? [String: Any])
        let errors = try #require(document["errors"] as? [String])
        #expect(errors.count == 2 && errors[0].hasPrefix("--target topic/nws names no topic"))
        #expect(document["message"] as? String == errors[1] && errors[1].hasSuffix(". Nothing was read from FCM or sent"))
        #expect(captured.err == errors.map { "error: \($0)\n" }.joined())
    }

    @Test func aMessageOfSeveralLinesIsNamedByItsFirstAndControlCharactersStayEscaped() async throws {
        let (captured, _) = try await Self.failedPlan(format: "json") {
            throw fail("the saved plan is stale:\n  the state moved on (serial 4, the plan has 3)\u{1B}[2J")
        }
        #expect(captured.err == "error: the saved plan is stale:\n  the state moved on (serial 4, the plan has 3)\\u{1B}[2J\n")
        let document = try #require(JSONSerialization.jsonObject(with: Data(captured.out.utf8)) as? [String: Any])
        #expect(document["message"] as? String == "the saved plan is stale:")
    }

    @Test func aFindingWithAPlaceIsADiagnosticNotARunError() {
        let place = SourceLocation(file: "fleet.yaml", line: 3, column: 5)
        let notice = Notice(Diagnostic.error("topic \"bad topic\" is not a valid name", at: place))
        #expect(NoticeText.line(notice) == "fleet.yaml:3:5: error: topic \"bad topic\" is not a valid name")
        let record = RunRecord()
        record.record(notice)
        record.record(.info("Refreshing…"))
        #expect(record.errors.isEmpty)
        let document = ErrorDocument(command: "plan", exitCode: 1, run: record, redactor: Redactor(showTokens: false))
        #expect(document.message == "fcmctl plan failed with exit code 1")
    }
}
