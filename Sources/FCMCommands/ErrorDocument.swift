import ArgumentParser
import FCMCore
import FCMEngine
import FCMViews
import Foundation

/// What a failed plan, apply or drift shows when it ends before its document: with `--format json` or
/// `markdown` a workflow reads stdout, and an empty stdout left a stale pull-request comment in place or a
/// parser failing on nothing. The error goes where the document would have gone, in the same format: a
/// JSON document of kind `error` (schemas/error.schema.json), or Markdown under the command's comment
/// marker (so it replaces the last plan comment) and `<!-- fcmctl:error -->`. Text keeps stderr alone.
struct ErrorDocument {
    static let marker = "<!-- fcmctl:error -->"

    var command: String
    var exitCode: Int32
    var run: RunRecord
    var redactor: Redactor

    /// The last `error:` line, the cause the run ended on.
    var message: String { run.errors.last ?? "fcmctl \(command) failed with exit code \(exitCode)" }

    /// The `error:` lines but those that only repeat a diagnostic without a place (printed as `error: …`
    /// too), which `diagnostics` already holds.
    var errors: [String] {
        let unplaced = Set(run.diagnostics.filter { $0.location == nil }.map(\.message))
        let lines = run.errors
        return lines.enumerated().filter { $0.offset == lines.count - 1 || !unplaced.contains($0.element) }.map(\.element)
    }

    func json() -> JSONTree {
        .object(
            DocumentJSON.header(kind: "error") + [
                ("command", .string(command)), ("project", .optional(run.project)), ("exit_code", .int(Int(exitCode))),
                ("message", .string(SourceExcerptRedaction.redact(message, redactor))),
                ("errors", .array(errors.map { .string(SourceExcerptRedaction.redact($0, redactor)) })),
                ("diagnostics", .array(run.diagnostics.map { DocumentJSON.diagnostic($0, redactor: redactor) })),
            ])
    }

    func markdown() -> String {
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

    /// Shows the document in `options.format` (text shows nothing more: stderr said it all), writes
    /// `--json-into`, and on GitHub adds an annotation and the step summary. Failing here changes nothing:
    /// the run has failed already.
    func show(_ options: OutputOptions, console: Console) {
        switch options.format {
        case .text: break
        case .json: console.writeOut(json().serialized())
        case .markdown: console.writeOut(markdown())
        case .github:
            console.out(GitHubAnnotations.line(.error(message), redactor: redactor))
            if let path = console.environment["GITHUB_STEP_SUMMARY"], !path.isEmpty, let handle = FileHandle(forWritingAtPath: path) {
                handle.seekToEndOfFile()
                handle.write(Data((markdown() + "\n").utf8))
                try? handle.close()
            }
        }
        if let path = options.jsonInto {
            let mode = redactor.showTokens ? OutputFiles.secret : OutputFiles.document
            try? OutputFiles.write(Data(json().serialized().utf8), to: path, mode: mode)
        }
    }

    /// Runs a command's body; if it fails before its document was shown, shows an error document instead
    /// and rethrows, so the exit code and stderr stay what they were.
    static func guarding(
        _ command: String, output: OutputOptions, showTokens: Bool, _ body: () async throws -> Void
    ) async throws {
        let run = RunRecord()
        let console = Console.current
        var recording = console
        recording.writeErr = { text in
            run.noteErrors(in: text)
            console.writeErr(text)
        }
        do {
            try await RunRecord.$current.withValue(run) { try await Console.$current.withValue(recording) { try await body() } }
        } catch {
            var code = (error as? ExitCode)?.rawValue ?? FCMCtl.exitCode(for: error).rawValue
            if !(error is ExitCode) && code == ExitCode.validationFailure.rawValue { code = ExitCodes.usage }  // as `FCMCtl.execute` maps it
            if code != ExitCodes.success && !run.documentShown {
                if !(error is ExitCode) { run.noteErrors(in: "error: " + FCMCtl.message(for: error)) }
                ErrorDocument(command: command, exitCode: code, run: run, redactor: Redactor(showTokens: showTokens)).show(output, console: console)
            }
            throw error
        }
    }
}
