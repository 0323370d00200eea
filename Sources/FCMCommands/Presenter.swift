import FCMCore
import FCMViews
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
        // Outside GitHub (a variable left over, a runner image without the file) the run's own result must
        // not turn into a failure: the summary is a copy of what stdout shows.
        guard let handle = FileHandle(forWritingAtPath: path) else {
            console.say(
                .warning(
                    "GITHUB_STEP_SUMMARY names \(PrintableText.oneLine(path)), which does not exist or is not writable: "
                        + "the run's summary was not written there (stdout has it)"))
            return
        }
        defer { try? handle.close() }
        handle.seekToEndOfFile()
        handle.write(Data((markdown + "\n").utf8))
    }
}
