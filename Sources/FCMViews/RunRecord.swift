import FCMCore
import Synchronization

/// What a run said on its way, for its error document: the `error:` lines on stderr, the manifest's
/// diagnostics, the project once known, and whether the command's own document was shown.
package final class RunRecord: Sendable {
    @TaskLocal package static var current: RunRecord?

    private struct Said {
        var errorLines: [String] = []
        var diagnostics: [Diagnostic] = []
        var shown = false
        var project: String?
    }

    private let said = Mutex(Said())

    package init() {}

    package var errors: [String] { said.withLock { $0.errorLines } }
    package var diagnostics: [Diagnostic] { said.withLock { $0.diagnostics } }
    package var documentShown: Bool { said.withLock { $0.shown } }
    package var project: String? {
        get { said.withLock { $0.project } }
        set { said.withLock { $0.project = newValue } }
    }

    package func noteErrors(in text: String) {
        let found = text.split(separator: "\n").filter { $0.hasPrefix("error: ") }.map { String($0.dropFirst(7)) }
        guard !found.isEmpty else { return }
        said.withLock { $0.errorLines += found }
    }

    package func record(_ diagnostics: [Diagnostic]) { said.withLock { $0.diagnostics += diagnostics } }

    package func markShown() { said.withLock { $0.shown = true } }
}
