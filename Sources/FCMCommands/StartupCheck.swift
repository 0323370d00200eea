import FCMClient
import Foundation

/// What `main` checks before anything else runs.
package enum StartupCheck {
    /// Exits 1 with a message when the open-file limit is too low for the runtime to start: the signal
    /// handlers' dispatch sources would otherwise stop the process with SIGILL.
    package static func requireDescriptors() {
        guard let shortage = DescriptorBudget.processShortage else { return }
        FileHandle.standardError.write(Data("error: \(shortage)\n".utf8))
        exit(1)
    }
}
