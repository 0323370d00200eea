import FCMCore
import Foundation

/// What a command shows, in every format: the renderers of one result.
struct Presentation {
    var text: () -> [String]
    var json: () -> JSONTree
    var markdown: (_ maxChars: Int) -> String
    /// Findings with a place in the manifest, for `--format github` annotations.
    var annotations: [Diagnostic] = []
}

/// Prints a presentation in the chosen format, writes `--json-into`, and appends the step summary on
/// GitHub. The one place where a result meets stdout.
struct Presenter {
    let options: OutputOptions
    /// For hints such as "run fcmctl drift locally".
    var command = "plan"
    /// The documents hold registrations in full (`--show-tokens`): `--json-into` is then written 0600.
    var secret = false
    var console: Console { Console.current }

    func show(_ presentation: Presentation) throws {
        // The command reached its document: a failure after this point needs no error document.
        RunRecord.current?.markShown()
        switch options.format {
        case .text:
            console.out(lines: presentation.text())
        case .json:
            console.writeOut(presentation.json().serialized())
        case .markdown:
            console.writeOut(presentation.markdown(options.maxChars))
        case .github:
            console.out(lines: GitHubAnnotations.lines(presentation.annotations, command: command))
            console.out(lines: presentation.text())
            try appendStepSummary(presentation)
        }
        if let path = options.jsonInto {
            do {
                let mode = secret ? OutputFiles.secret : OutputFiles.document
                try OutputFiles.write(Data(presentation.json().serialized().utf8), to: path, mode: mode)
            } catch {
                throw fail("cannot write --json-into \(path): \(error)")
            }
        }
    }

    /// GitHub shows `$GITHUB_STEP_SUMMARY` on the run's page; it takes up to 1 MiB per step.
    func appendStepSummary(_ presentation: Presentation) throws {
        guard let path = console.environment["GITHUB_STEP_SUMMARY"], !path.isEmpty else { return }
        let markdown = presentation.markdown(min(options.maxChars, MarkdownBudget.stepSummaryLimit))
        guard let handle = FileHandle(forWritingAtPath: path) else {
            throw fail("cannot append to GITHUB_STEP_SUMMARY (\(path)): the file does not exist or is not writable")
        }
        defer { try? handle.close() }
        handle.seekToEndOfFile()
        handle.write(Data((markdown + "\n").utf8))
    }
}

/// GitHub workflow commands: at most 10 annotations, the most severe first, then a count of the rest.
enum GitHubAnnotations {
    static let limit = 10

    static func lines(_ diagnostics: [Diagnostic], redactor: Redactor = Redactor(showTokens: false), command: String = "plan") -> [String] {
        let ordered = diagnostics.enumerated().sorted { ($0.element.severity, $0.offset) < ($1.element.severity, $1.offset) }.map(\.element)
        var lines = ordered.prefix(limit).map { line($0, redactor: redactor) }
        if ordered.count > limit {
            lines.append("::notice::\(ordered.count - limit) more problems not shown; run fcmctl \(command) locally for all of them")
        }
        return lines
    }

    /// GitHub's escaping: %, CR and LF in the message; also , and : in properties.
    static func line(_ diagnostic: Diagnostic, redactor: Redactor) -> String {
        let command = diagnostic.severity == .note ? "notice" : diagnostic.severity.rawValue
        let message = SourceExcerptRedaction.redact(diagnostic.message, redactor).replacingOccurrences(of: "%", with: "%25")
            .replacingOccurrences(of: "\r", with: "%0D").replacingOccurrences(of: "\n", with: "%0A")
        guard let location = diagnostic.location else { return "::\(command)::\(message)" }
        let file = location.file.replacingOccurrences(of: "%", with: "%25").replacingOccurrences(of: ",", with: "%2C")
            .replacingOccurrences(of: ":", with: "%3A")
        return "::\(command) file=\(file),line=\(location.line),col=\(location.column)::\(message)"
    }
}
