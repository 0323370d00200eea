import FCMCore
import FCMReconcile

/// An apply that did not write the state at its end, and where its records are. After a takeover the run that
/// took over folds this run's journal into the state and removes it, so "its journal keeps every record" is
/// said only when the journal was found still there (JournalFate); otherwise the words say what happened to
/// the records and what to do next.
package struct UnsavedState: Sendable {
    /// Why nothing was written: the failed write's error, or the lost lock.
    var reason: String
    var fate: JournalFate
    /// Where the store keeps journals, as a person finds them.
    var journalName: String

    /// The one line the result ends with, in place of "State: … (serial N)."
    package var stateLine: String {
        switch fate {
        case .kept:
            "This run wrote no state; its journal keeps every record, and the next run folds it in."
        case .folded(let base, let now):
            "This run wrote no state; its journal was folded into the state by a later write (serial \(base) is now \(now)), "
                + "which holds what it recorded."
        case .lost:
            "This run wrote no state, and its journal was removed without being folded in: its records are lost (see the error)."
        case .unknown:
            "The state could not be written, and whether its journal still holds its records could not be checked (see the error)."
        }
    }

    /// The error the run ends with.
    func message(_ report: ApplyReport?) -> String {
        switch fate {
        case .kept:
            return "\(reason). Its journal is kept: every completed operation is in \(journalName); the next run folds it in"
        case .folded(let base, let now):
            return "\(reason). Nothing this run recorded is lost: a later write folded its journal into the state and removed it "
                + "from \(journalName) (this run began on serial \(base); the state is now serial \(now); every write folds the journals "
                + "it finds, and a run that takes the lock over writes before it sends). Its completed operations are recorded there, "
                + "and those it had in flight are settled against FCM like any pending ones. Nothing is left for this run to write: "
                + "run `fcmctl plan` to see what is left to do"
        case .lost(let why):
            return "\(reason). Its journal is gone from \(journalName), and \(why): \(Self.lostRecords(report)), and this run "
                + "could not record them itself (another run holds the lock, or the state is no longer the one it began from). If the journal was moved aside, put it back where it was "
                + "before that run writes: the next write folds it in. Otherwise FCM has these changes but no state records them, so "
                + "fcmctl takes them for the apps' own and will never remove them: to manage them again, add them to the state "
                + "(`fcmctl state pull`, edit, `fcmctl state push`)"
        case .unknown(let problem):
            return "\(reason). Whether \(journalName) still holds this run's records could not be checked (\(problem)): if it does, "
                + "the next run folds it in; if not, run `fcmctl apply` again with this run's manifests to record what it did"
        }
    }

    /// "the records of 154 completed operations are lost (topic/news: 154), and of 8 that may have happened".
    static func lostRecords(_ report: ApplyReport?) -> String {
        guard let report else { return "what this run recorded is lost" }
        let done = report.operationsDone
        let listed = report.completed.sorted { $0.key < $1.key }
        var places = listed.prefix(10).map { "\($0.key): \($0.value)" }
        if listed.count > 10 { places.append("and \(listed.count - 10) more") }
        let unsettled = report.unsettled > 0 ? ", and of \(report.unsettled) that may have happened" : ""
        return "the records of \(done) completed operation\(done == 1 ? "" : "s") are lost"
            + (places.isEmpty ? "" : " (\(places.joined(separator: ", ")))") + unsettled
    }
}
