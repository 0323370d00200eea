import FCMCore
import Foundation

/// What a failed plan, apply or drift shows when it ends before its document: with `--format json` or
/// `markdown` a workflow reads stdout, and an empty stdout left a stale pull-request comment in place or a
/// parser failing on nothing. The error goes where the document would have gone, in the same format: a
/// JSON document of kind `error` (schemas/error.schema.json), or Markdown under the command's comment
/// marker (so it replaces the last plan comment) and `<!-- fcmctl:error -->`. Text keeps stderr alone.
/// Rendered from the run's record: the error notices and diagnostics as they were said.
package struct ErrorDocument {
    package static let marker = "<!-- fcmctl:error -->"

    package var command: String
    package var exitCode: Int32
    package var run: RunRecord
    package var redactor: Redactor

    package init(command: String, exitCode: Int32, run: RunRecord, redactor: Redactor) {
        self.command = command
        self.exitCode = exitCode
        self.run = run
        self.redactor = redactor
    }

    /// The cause the run ended on: its last error.
    package var message: String { errors.last ?? "fcmctl \(command) failed with exit code \(exitCode)" }

    /// Each error by its first line, escaped as on stderr: the document names causes; the job's log has
    /// every line.
    package var errors: [String] { run.errors.map { Self.headline($0) } }

    static func headline(_ notice: Notice) -> String {
        String(PrintableText.lines(notice.message).split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false).first ?? "")
    }

    package func json() -> JSONTree {
        .object(
            DocumentJSON.header(kind: "error") + [
                ("command", .string(command)), ("project", .optional(run.project)), ("exit_code", .int(Int(exitCode))),
                ("message", .string(SourceExcerptRedaction.redact(message, redactor))),
                ("errors", .array(errors.map { .string(SourceExcerptRedaction.redact($0, redactor)) })),
                ("diagnostics", .array(run.diagnostics.map { DocumentJSON.diagnostic($0, redactor: redactor) })),
            ])
    }

    package func markdown() -> String {
        let commentMarker = command == "drift" ? DriftView.marker : PlanMarkdownRenderer.marker
        var text = "\(commentMarker)\n\(Self.marker)\n### fcmctl \(command) failed"
        if let project = run.project { text += " · project \(MarkdownText.code(project))" }
        text += "\n\n> [!CAUTION]\n> **Exit code \(exitCode):** \(MarkdownText.inline(SourceExcerptRedaction.redact(message, redactor)))\n\n"
        var lines = errors.dropLast().suffix(20).map { "- \(MarkdownText.inline(SourceExcerptRedaction.redact($0, redactor)))" }
        for diagnostic in run.diagnostics.prefix(20) {
            let place = diagnostic.location.map { MarkdownText.code("\($0.file):\($0.line):\($0.column)") + " " } ?? ""
            lines.append(
                "- \(place)**\(diagnostic.severity.rawValue)**: \(MarkdownText.inline(SourceExcerptRedaction.redact(diagnostic.message, redactor)))")
        }
        if run.diagnostics.count > 20 { lines.append("- … and \(run.diagnostics.count - 20) more problems") }
        if !lines.isEmpty { text += lines.joined(separator: "\n") + "\n\n" }
        return text + "The run ended before its report; the job's log holds everything fcmctl printed.\n"
    }

    /// The GitHub annotation of the cause.
    package func annotation() -> String { GitHubAnnotations.line(.error(message), redactor: redactor) }
}
