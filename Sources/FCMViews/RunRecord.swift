import FCMCore
import Synchronization

/// What a run said on its way, as values, for its error document: its notices (failures, warnings, lines of
/// information) as they were said, the manifest's diagnostics, the project once known, and whether the
/// command's own document was shown. The console of a run that keeps one carries it (`Console.record`).
package final class RunRecord: Sendable {
    /// The record of the run this task belongs to, if it keeps one.
    package static var current: RunRecord? { Console.current.record }

    private struct Said {
        var notices: [Notice] = []
        var diagnostics: [Diagnostic] = []
        var shown = false
        var project: String?
    }

    private let said = Mutex(Said())

    package init() {}

    package var notices: [Notice] { said.withLock { $0.notices } }
    /// The failures said without a place in a manifest, in order: the last is the cause the run ended on.
    /// (A failure with a place is a finding about the input, which `diagnostics` holds.)
    package var errors: [Notice] { notices.filter { $0.severity == .error && $0.location == nil } }
    package var diagnostics: [Diagnostic] { said.withLock { $0.diagnostics } }
    package var documentShown: Bool { said.withLock { $0.shown } }
    package var project: String? {
        get { said.withLock { $0.project } }
        set { said.withLock { $0.project = newValue } }
    }

    package func record(_ notice: Notice) { said.withLock { $0.notices.append(notice) } }

    package func record(_ diagnostics: [Diagnostic]) { said.withLock { $0.diagnostics += diagnostics } }

    package func markShown() { said.withLock { $0.shown = true } }
}
