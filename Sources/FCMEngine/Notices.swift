/// What a use case has to say on its way (recovered journals, warnings, `--verbose` figures), handed to the
/// command's view as lines for stderr; the engine itself never writes to the terminal.
package struct Notices: Sendable {
    private let emit: @Sendable (String) -> Void

    package init(_ emit: @escaping @Sendable (String) -> Void) { self.emit = emit }

    package func callAsFunction(_ line: String) { emit(line) }

    package func warning(_ text: String) { emit("warning: " + text) }

    package static let silent = Notices { _ in }
}
