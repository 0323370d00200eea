/// A 1-based position in a source file, as editors and `path:line:col` consumers expect.
package struct SourceLocation: Hashable, Sendable, Comparable {
    package let file: String
    package let line: Int
    package let column: Int

    package init(file: String, line: Int, column: Int) {
        self.file = file
        self.line = line
        self.column = column
    }

    package static func < (lhs: SourceLocation, rhs: SourceLocation) -> Bool {
        (lhs.file, lhs.line, lhs.column) < (rhs.file, rhs.line, rhs.column)
    }
}

/// One finding about the user's input. Stages collect these instead of throwing at the first problem,
/// so a single run reports everything that is wrong.
package struct Diagnostic: Hashable, Sendable {
    package enum Severity: String, Sendable, Comparable {
        case error
        case warning
        case note

        private var rank: Int {
            switch self {
            case .error: 0
            case .warning: 1
            case .note: 2
            }
        }

        package static func < (lhs: Severity, rhs: Severity) -> Bool { lhs.rank < rhs.rank }
    }

    package let severity: Severity
    package var message: String
    package let location: SourceLocation?

    package init(_ severity: Severity, _ message: String, at location: SourceLocation? = nil) {
        self.severity = severity
        self.message = message
        self.location = location
    }

    package static func error(_ message: String, at location: SourceLocation? = nil) -> Diagnostic {
        Diagnostic(.error, message, at: location)
    }

    package static func warning(_ message: String, at location: SourceLocation? = nil) -> Diagnostic {
        Diagnostic(.warning, message, at: location)
    }

    /// `path:line:col: severity: message`, the form compilers and linters use, so editors can jump to it.
    package var headline: String {
        guard let location else { return "\(severity.rawValue): \(message)" }
        return "\(location.file):\(location.line):\(location.column): \(severity.rawValue): \(message)"
    }
}

extension Array where Element == Diagnostic {
    package var hasErrors: Bool { contains { $0.severity == .error } }

    /// Files in order, then by position; diagnostics without a location last.
    package func sortedForDisplay() -> [Diagnostic] {
        sorted { lhs, rhs in
            switch (lhs.location, rhs.location) {
            case (let l?, let r?): return l == r ? lhs.severity < rhs.severity : l < r
            case (.some, .none): return true
            case (.none, .some): return false
            case (.none, .none): return lhs.message < rhs.message
            }
        }
    }
}
