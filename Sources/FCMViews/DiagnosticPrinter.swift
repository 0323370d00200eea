import FCMCore
import Foundation
import Synchronization

/// Prints diagnostics as people and machines expect them:
/// - text: `path:line:col: severity: message`, the offending source line and a caret, on stderr;
/// - json: one versioned document on stdout;
/// - github: `::error file=…,line=…,col=…::…` workflow commands on stdout, at most 10, errors first;
/// - markdown: as text (a command's Markdown document carries its own findings).
package struct DiagnosticPrinter {
    package let sources: [String: [UInt8]]
    package var format: OutputFormat = .text

    package init(sources: [String: [UInt8]], format: OutputFormat = .text, redactor: Redactor = Redactor(showTokens: false)) {
        self.redactor = redactor
        self.sources = sources
        self.format = format
    }
    package var redactor = Redactor(showTokens: false)
    /// Line starts per file, found once: thousands of diagnostics in one file must not rescan it each time.
    private let lineStarts = LineIndex()

    package func print(_ diagnostics: [Diagnostic]) {
        let console = Console.current
        // Messages may quote a registration (a FID of the wrong shape, say): redacted in every format.
        let diagnostics = diagnostics.map { diagnostic in
            var redacted = diagnostic
            redacted.message = SourceExcerptRedaction.redact(diagnostic.message, redactor)
            return redacted
        }
        // A run that fails on them shows them in its error document too (`--format json|markdown`).
        RunRecord.current?.record(diagnostics)
        switch format {
        case .text:
            for diagnostic in diagnostics { console.err(render(diagnostic)) }
        case .json:
            console.out(json(diagnostics))
        case .github:
            console.out(lines: GitHubAnnotations.lines(diagnostics, redactor: redactor, command: "validate"))
        case .markdown:
            for diagnostic in diagnostics { console.err(render(diagnostic)) }
        }
    }

    package func render(_ diagnostic: Diagnostic) -> String {
        // A message may quote what it refuses (a YAML key, a CSV column, a file name): shown escaped.
        var text = PrintableText.lines(diagnostic.headline)
        guard let location = diagnostic.location, let line = sourceLine(location) else { return text }
        // The quoted line may hold a registration: it is redacted like every other output.
        let before = String(line.prefix(max(0, location.column - 1)))
        let prefix = SourceExcerptRedaction.redact(before, redactor).map { $0 == "\t" ? "\t" : " " }.joined()
        text += "\n    \(Self.printable(SourceExcerptRedaction.redact(line, redactor)))\n    \(prefix)^"
        return text
    }

    /// A quoted source line reaches a terminal and a CI log: its control characters (ESC, BEL, NUL, a CR
    /// that would start a line of its own) are shown escaped, never sent raw.
    static func printable(_ line: String) -> String { PrintableText.escaped(line, keeping: ["\t"]) }

    package func json(_ diagnostics: [Diagnostic]) -> String {
        let items: [[String: Any]] = diagnostics.map { diagnostic in
            var item: [String: Any] = ["severity": diagnostic.severity.rawValue, "message": diagnostic.message]
            if let location = diagnostic.location {
                item["file"] = location.file
                item["line"] = location.line
                item["column"] = location.column
            }
            return item
        }
        let document: [String: Any] = [
            "format_version": "1",
            "valid": !diagnostics.hasErrors,
            "error_count": diagnostics.filter { $0.severity == .error }.count,
            "warning_count": diagnostics.filter { $0.severity == .warning }.count,
            "diagnostics": items,
        ]
        let data = (try? JSONSerialization.data(withJSONObject: document, options: [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes])) ?? Data()
        return PrintableText.jsonVisible(String(decoding: data, as: UTF8.self))
    }

    /// Only a YAML manifest's line is quoted: a device file's line (or a file a symlink made one) may hold
    /// more than the field at fault, and its message names that field already.
    package func sourceLine(_ location: SourceLocation) -> String? {
        let ext = (location.file as NSString).pathExtension.lowercased()
        guard ext == "yaml" || ext == "yml", let bytes = sources[location.file], location.line >= 1 else { return nil }
        let starts = lineStarts.starts(of: location.file, bytes)
        guard location.line <= starts.count else { return nil }
        let start = starts[location.line - 1]
        let end = bytes[start...].firstIndex(of: UInt8(ascii: "\n")) ?? bytes.endIndex
        let line = String(decoding: bytes[start..<end].prefix(400), as: UTF8.self)
        return line.hasSuffix("\r") ? String(line.dropLast()) : line
    }
}

private final class LineIndex: Sendable {
    private let cache = Mutex<[String: [Int]]>([:])

    func starts(of file: String, _ bytes: [UInt8]) -> [Int] {
        cache.withLock { cache in
            if let known = cache[file] { return known }
            var starts = [0]
            for (index, byte) in bytes.enumerated() where byte == UInt8(ascii: "\n") { starts.append(index + 1) }
            cache[file] = starts
            return starts
        }
    }
}

/// Finds what looks like a registration in a quoted source line (an FCM token: 30+ characters with a ':';
/// a FID; any 64+ character run of token characters) and redacts it.
package enum SourceExcerptRedaction {
    package static func redact(_ line: String, _ redactor: Redactor) -> String {
        guard !redactor.showTokens else { return line }
        var out = ""
        var run = ""
        func flush() {
            out += Registration.looksLikeRegistrationInText(run) ? redactor.redact(run) : run
            run = ""
        }
        for character in line {
            if character.isASCII, character.isLetter || character.isNumber || character == ":" || character == "-" || character == "_" {
                run.append(character)
            } else {
                flush()
                out.append(character)
            }
        }
        flush()
        return out
    }
}
