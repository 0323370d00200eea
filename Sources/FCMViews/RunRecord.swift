import FCMCore
import Foundation

/// What a run said on its way, for its error document: the `error:` lines on stderr, the manifest's
/// diagnostics, the project once known, and whether the command's own document was shown.
package final class RunRecord: @unchecked Sendable {
    package init() {}
    @TaskLocal package static var current: RunRecord?

    private let lock = NSLock()
    private var errorLines: [String] = []
    private var recordedDiagnostics: [Diagnostic] = []
    private var shown = false
    private var projectID: String?

    package var errors: [String] { lock.withLock { errorLines } }
    package var diagnostics: [Diagnostic] { lock.withLock { recordedDiagnostics } }
    package var documentShown: Bool { lock.withLock { shown } }
    package var project: String? {
        get { lock.withLock { projectID } }
        set { lock.withLock { projectID = newValue } }
    }

    package func noteErrors(in text: String) {
        let found = text.split(separator: "\n").filter { $0.hasPrefix("error: ") }.map { String($0.dropFirst(7)) }
        guard !found.isEmpty else { return }
        lock.withLock { errorLines += found }
    }

    package func record(_ diagnostics: [Diagnostic]) { lock.withLock { recordedDiagnostics += diagnostics } }

    package func markShown() { lock.withLock { shown = true } }
}
