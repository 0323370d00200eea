import Foundation
import Synchronization

/// Whether the operator's group member export still answers in this run. The first answer that says
/// there is no such API turns it off for the rest of the run, so a fleet of groups costs one failed request.
final class GroupExportProbe: Sendable {
    private let why = Mutex<String?>(nil)

    var isOff: Bool { why.withLock { $0 != nil } }
    var reason: String? { why.withLock { $0 } }

    func turnOff(because reason: String) {
        why.withLock { if $0 == nil { $0 = reason } }
    }
}
