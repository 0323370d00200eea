import ArgumentParser
import FCMCore
import FCMEngine
import FCMViews
import Foundation

extension ErrorDocument {
    /// Shows the document in `options.format` (text shows nothing more: stderr said it all), writes
    /// `--json-into`, and on GitHub adds an annotation and the step summary. Failing here changes nothing:
    /// the run has failed already.
    func show(_ options: OutputOptions, console: Console) {
        switch options.format {
        case .text: break
        case .json: console.writeOut(json().serialized())
        case .markdown: console.writeOut(markdown())
        case .github:
            console.out(annotation())
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

    /// Runs a command's body with a record of what it says; if it fails before its document was shown,
    /// shows an error document rendered from that record instead and rethrows, so the exit code and stderr
    /// stay what they were.
    static func guarding(
        _ command: String, output: OutputOptions, showTokens: Bool, _ body: () async throws -> Void
    ) async throws {
        let run = RunRecord()
        let console = Console.current
        var recording = console
        recording.record = run
        do {
            try await Console.$current.withValue(recording) { try await body() }
        } catch {
            var code = (error as? ExitCode)?.rawValue ?? FCMCtl.exitCode(for: error).rawValue
            if !(error is ExitCode) && code == ExitCode.validationFailure.rawValue { code = ExitCodes.usage }  // as `FCMCtl.execute` maps it
            if code != ExitCodes.success && !run.documentShown {
                // Said on stderr by `FCMCtl.execute` once this returns, outside the record: recorded here.
                if let failure = error as? EngineFailure {
                    for notice in failure.notices { run.record(notice) }
                } else if !(error is ExitCode) {
                    run.record(.error(FCMCtl.message(for: error)))
                }
                ErrorDocument(command: command, exitCode: code, run: run, redactor: Redactor(showTokens: showTokens)).show(output, console: console)
            }
            throw error
        }
    }
}
