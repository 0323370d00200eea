import FCMCore

/// What a use case has to say on its way (recovered journals, warnings, registrations it could not read,
/// `--verbose` figures), handed on as `Notice` values: the command's view renders them; the engine itself
/// never writes to the terminal, nor words a severity.
package struct Notices: Sendable {
    private let emit: @Sendable (Notice) -> Void

    package init(_ emit: @escaping @Sendable (Notice) -> Void) { self.emit = emit }

    package func callAsFunction(_ notice: Notice) { emit(notice) }

    /// A line of information.
    package func callAsFunction(_ line: String) { emit(.info(line)) }

    package func warning(_ text: String, about address: Address? = nil) { emit(.warning(text, about: address)) }

    package func note(_ text: String, about address: Address? = nil) { emit(.note(text, about: address)) }

    package func error(_ text: String, about address: Address? = nil) { emit(.error(text, about: address)) }

    package static let silent = Notices { _ in }
}
