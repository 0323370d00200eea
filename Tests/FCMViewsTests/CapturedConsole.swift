import FCMViews
import Synchronization

/// stdout and stderr of a run, as the real console would take them.
final class Captured: Sendable {
    private let text = Mutex((out: "", err: ""))

    var out: String { text.withLock { $0.out } }
    var err: String { text.withLock { $0.err } }

    var console: Console {
        Console(writeOut: { line in self.text.withLock { $0.out += line } }, writeErr: { line in self.text.withLock { $0.err += line } })
    }
}
