import Foundation

/// Whether the operator's group member export still answers in this run. The first answer that says
/// there is no such API turns it off for the rest of the run, so a fleet of groups costs one failed request.
final class GroupExportProbe: @unchecked Sendable {
    private let lock = NSLock()
    private var why: String?

    var isOff: Bool { lock.withLock { why != nil } }
    var reason: String? { lock.withLock { why } }

    func turnOff(because reason: String) {
        lock.withLock { if why == nil { why = reason } }
    }
}
