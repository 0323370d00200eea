import Foundation

/// Where commands write and read. Injected through a task-local so tests run the real commands and
/// capture exactly what a user would see, with no global mutable state.
package struct Console: Sendable {
    package var writeOut: @Sendable (String) -> Void
    package var writeErr: @Sendable (String) -> Void
    package var readLine: @Sendable () -> String?
    package var isInteractive: Bool
    package var environment: [String: String]
    /// Colour and progress are for people at a terminal, never for a pipe or a file.
    package var stdoutIsTerminal: Bool
    package var stderrIsTerminal: Bool
    /// The record of what the run says (`say`), for plan, apply and drift, whose failures end in an error
    /// document; nil for the other commands.
    package var record: RunRecord?

    package init(
        writeOut: @escaping @Sendable (String) -> Void, writeErr: @escaping @Sendable (String) -> Void,
        readLine: @escaping @Sendable () -> String? = { nil }, isInteractive: Bool = false,
        environment: [String: String] = [:], stdoutIsTerminal: Bool = false, stderrIsTerminal: Bool = false
    ) {
        self.stdoutIsTerminal = stdoutIsTerminal
        self.stderrIsTerminal = stderrIsTerminal
        self.writeOut = writeOut
        self.writeErr = writeErr
        self.readLine = readLine
        self.isInteractive = isInteractive
        self.environment = environment
    }

    package static let standard = Console(
        writeOut: { FileHandle.standardOutput.write(Data($0.utf8)) },
        writeErr: { FileHandle.standardError.write(Data($0.utf8)) },
        readLine: { Swift.readLine() },
        isInteractive: isatty(STDIN_FILENO) == 1,
        environment: ProcessInfo.processInfo.environment,
        stdoutIsTerminal: isatty(STDOUT_FILENO) == 1, stderrIsTerminal: isatty(STDERR_FILENO) == 1)

    @TaskLocal package static var current = Console.standard

    package func out(_ line: String = "") { writeOut(line + "\n") }
    /// Many lines in one write: a plan of thousands of members should not cost a system call per line.
    package func out(lines: [String]) {
        guard !lines.isEmpty else { return }
        var text = ""
        text.reserveCapacity(lines.reduce(0) { $0 + $1.utf8.count + 1 })
        for line in lines {
            text += line
            text += "\n"
        }
        writeOut(text)
    }
    package func err(_ line: String) { writeErr(line + "\n") }
}
