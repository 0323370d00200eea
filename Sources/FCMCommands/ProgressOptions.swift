import ArgumentParser
import FCMEngine
import FCMViews
import Foundation

/// `--no-progress` and `--events FILE|-`.
struct ProgressOptions: ParsableArguments {
    @Flag(help: "No progress on stderr: neither the terminal's line nor, when stderr is a log, a line every 10 s.")
    var noProgress = false

    @Option(
        help: ArgumentHelp(
            "Write one JSON object per line (start, progress, object, finish) to FILE, or to stdout with '-' (the usual output then goes to stderr).",
            valueName: "file"))
    var events: String?

    init() {}
}

extension ProgressOptions {
    /// The progress reporter for this run, and the console its usual output goes to: with `--events -`
    /// stdout carries only events, so the rest moves to stderr.
    func reporter(console: Console, format: OutputFormat = .text) throws -> (RunProgress, Console) {
        var output = console
        var sink: (@Sendable (String) -> Void)?
        if let events {
            if events == "-" {
                let write = console.writeOut
                sink = { write($0 + "\n") }
                output.writeOut = console.writeErr
                output.stdoutIsTerminal = console.stderrIsTerminal
            } else {
                // Events name registrations redacted; the file is a document, not a secret.
                guard let handle = try? OutputFiles.appending(events, mode: OutputFiles.document) else {
                    throw fail("cannot write --events \(events)")
                }
                sink = { handle.write(Data(($0 + "\n").utf8)) }
            }
        }
        let mode: RunProgress.Mode = noProgress ? .off : console.stderrIsTerminal ? .terminal : .log(groups: format == .github)
        let world = World.current
        let progress = RunProgress(mode: mode, writeLine: console.writeErr, events: sink, clock: world.clock, now: world.now)
        return (progress, output)
    }
}

extension ProgressOptions {
    /// Runs a command's body with its progress reporter and console: the start event first, the finish event
    /// (with the exit code) last, whatever the body ends with.
    func running(_ command: String, format: OutputFormat, _ body: (RunProgress) async throws -> Void) async throws {
        let (progress, console) = try reporter(console: Console.current, format: format)
        try await Console.$current.withValue(console) {
            progress.start(command: command)
            do {
                try await body(progress)
                progress.finish(exitCode: ExitCodes.success)
            } catch let code as ExitCode {
                progress.finish(exitCode: code.rawValue)
                throw code
            } catch {
                progress.finish(exitCode: ExitCodes.error)
                throw error
            }
        }
    }
}
