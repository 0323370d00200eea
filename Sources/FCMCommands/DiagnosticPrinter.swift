import FCMCore
import Foundation

/// Prints diagnostics as people and machines expect them:
/// - text: `path:line:col: severity: message`, the offending source line and a caret, on stderr;
/// - json: one versioned document on stdout;
/// - github: `::error file=…,line=…,col=…::…` workflow commands on stdout, at most 10, errors first.
struct DiagnosticPrinter {
    let sources: [String: [UInt8]]
    var format: OutputFormat = .text
    static let githubLimit = 10

    func print(_ diagnostics: [Diagnostic]) {
        let console = Console.current
        switch format {
        case .text:
            for diagnostic in diagnostics { console.err(render(diagnostic)) }
        case .json:
            console.out(json(diagnostics))
        case .github:
            let ordered = diagnostics.sorted { $0.severity < $1.severity }
            for diagnostic in ordered.prefix(Self.githubLimit) { console.out(github(diagnostic)) }
            if ordered.count > Self.githubLimit {
                console.out("::notice::\(ordered.count - Self.githubLimit) more problems not shown; run fcmctl validate locally for all of them")
            }
        }
    }

    func render(_ diagnostic: Diagnostic) -> String {
        var text = diagnostic.headline
        guard let location = diagnostic.location, let line = sourceLine(location) else { return text }
        let prefix = line.prefix(max(0, location.column - 1)).map { $0 == "\t" ? "\t" : " " }.joined()
        text += "\n    \(line)\n    \(prefix)^"
        return text
    }

    func json(_ diagnostics: [Diagnostic]) -> String {
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
        return String(decoding: data, as: UTF8.self)
    }

    /// GitHub's workflow-command escaping: %, CR and LF in the message; also , and : in properties.
    func github(_ diagnostic: Diagnostic) -> String {
        let command = diagnostic.severity == .note ? "notice" : diagnostic.severity.rawValue
        let message = diagnostic.message.replacingOccurrences(of: "%", with: "%25")
            .replacingOccurrences(of: "\r", with: "%0D").replacingOccurrences(of: "\n", with: "%0A")
        guard let location = diagnostic.location else { return "::\(command)::\(message)" }
        let file = location.file.replacingOccurrences(of: "%", with: "%25").replacingOccurrences(of: ",", with: "%2C")
            .replacingOccurrences(of: ":", with: "%3A")
        return "::\(command) file=\(file),line=\(location.line),col=\(location.column)::\(message)"
    }

    func sourceLine(_ location: SourceLocation) -> String? {
        guard let bytes = sources[location.file], location.line >= 1 else { return nil }
        var current = 1
        var start = bytes.startIndex
        while current < location.line {
            guard let newline = bytes[start...].firstIndex(of: UInt8(ascii: "\n")) else { return nil }
            start = newline + 1
            current += 1
        }
        let end = bytes[start...].firstIndex(of: UInt8(ascii: "\n")) ?? bytes.endIndex
        let line = String(decoding: bytes[start..<end].prefix(400), as: UTF8.self)
        return line.hasSuffix("\r") ? String(line.dropLast()) : line
    }
}
