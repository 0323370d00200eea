import FCMCore
import Foundation

/// GitHub workflow commands: at most 10 annotations, the most severe first, then a count of the rest.
package enum GitHubAnnotations {
    package static let limit = 10

    package static func lines(_ diagnostics: [Diagnostic], redactor: Redactor = Redactor(showTokens: false), command: String = "plan") -> [String] {
        let ordered = diagnostics.enumerated().sorted { ($0.element.severity, $0.offset) < ($1.element.severity, $1.offset) }.map(\.element)
        var lines = ordered.prefix(limit).map { line($0, redactor: redactor) }
        if ordered.count > limit {
            lines.append("::notice::\(ordered.count - limit) more problems not shown; run fcmctl \(command) locally for all of them")
        }
        return lines
    }

    /// GitHub's escaping: %, CR and LF in the message; also , and : in properties. Other control characters
    /// are shown escaped first, as in every format.
    package static func line(_ diagnostic: Diagnostic, redactor: Redactor) -> String {
        let command = diagnostic.severity == .note ? "notice" : diagnostic.severity.rawValue
        let message = PrintableText.escaped(SourceExcerptRedaction.redact(diagnostic.message, redactor), keeping: ["\n"])
            .replacingOccurrences(of: "%", with: "%25").replacingOccurrences(of: "\n", with: "%0A")
        guard let location = diagnostic.location else { return "::\(command)::\(message)" }
        let file = PrintableText.oneLine(location.file).replacingOccurrences(of: "%", with: "%25").replacingOccurrences(of: ",", with: "%2C")
            .replacingOccurrences(of: ":", with: "%3A")
        return "::\(command) file=\(file),line=\(location.line),col=\(location.column)::\(message)"
    }
}
