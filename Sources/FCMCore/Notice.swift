/// One thing a run says to the person running it, as a value: how grave it is, what it concerns (an object
/// in FCM, or a place in a manifest) and its words. It is recorded where it arises and rendered by the views
/// (stderr, the error document, GitHub annotations); no format is ever read back to rebuild another.
package struct Notice: Hashable, Sendable {
    package enum Severity: String, Sendable {
        case error
        case warning
        case note
        /// A line of information (what a run reads, how long it took): said without a severity word.
        case info
    }

    package let severity: Severity
    package let message: String
    /// The object the notice is about, when it is about one.
    package let address: Address?
    /// The place in a manifest it is about, when it is about one.
    package let location: SourceLocation?

    package init(_ severity: Severity, _ message: String, about address: Address? = nil, at location: SourceLocation? = nil) {
        self.severity = severity
        self.message = message
        self.address = address
        self.location = location
    }

    package static func error(_ message: String, about address: Address? = nil, at location: SourceLocation? = nil) -> Notice {
        Notice(.error, message, about: address, at: location)
    }

    package static func warning(_ message: String, about address: Address? = nil, at location: SourceLocation? = nil) -> Notice {
        Notice(.warning, message, about: address, at: location)
    }

    package static func note(_ message: String, about address: Address? = nil) -> Notice { Notice(.note, message, about: address) }

    package static func info(_ message: String) -> Notice { Notice(.info, message) }

    /// A finding about the input, said as a notice (a plan's notes, an apply's skipped operations).
    package init(_ diagnostic: Diagnostic) {
        let severity: Severity =
            switch diagnostic.severity {
            case .error: .error
            case .warning: .warning
            case .note: .note
            }
        self.init(severity, diagnostic.message, at: diagnostic.location)
    }
}
