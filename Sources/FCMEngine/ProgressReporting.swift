import FCMCore
import FCMReconcile

/// Where refresh and apply report how far they got: the view's progress line and event stream, or nothing.
package protocol ProgressReporting: Sendable {
    func beginPhase(_ name: String, total: Int)
    func advance(_ count: ProgressCount)
    func endPhase()
    func object(address: Address, status: OperationStatus, operations: Int)
    /// The plan computed: what it removes and why, and whether it is refused.
    func planned(_ plan: Plan)
}

package struct NoProgress: ProgressReporting {
    package init() {}
    package func beginPhase(_ name: String, total: Int) {}
    package func advance(_ count: ProgressCount) {}
    package func endPhase() {}
    package func object(address: Address, status: OperationStatus, operations: Int) {}
    package func planned(_ plan: Plan) {}
}
