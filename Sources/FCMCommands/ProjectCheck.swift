import FCMClient
import FCMCore
import FCMViews
import Foundation

/// A state belongs to one project (`Ledger.project`). Every command that reads a state to act on FCM or to
/// write it checks the state against its manifest's project right after reading it, before FCM is read.
extension Pipeline {
    /// The project a manifest is for, as a run addresses it: `project.id`, else the id `plan` takes from
    /// GOOGLE_CLOUD_PROJECT, GCLOUD_PROJECT or the service-account key (as `ProjectIDRule` and the connection
    /// do); and `project.senderId`.
    static func project(of settings: ProjectSettings, environment: [String: String] = Console.current.environment) -> ProjectBinding {
        var id = settings.id
        if id.isEmpty {
            id = [environment["GOOGLE_CLOUD_PROJECT"], environment["GCLOUD_PROJECT"]].compactMap { $0 }.first { !$0.isEmpty } ?? ""
        }
        if id.isEmpty, let path = environment["GOOGLE_APPLICATION_CREDENTIALS"], !path.isEmpty {
            id = (try? ServiceAccountKey(path: path))?.projectID ?? ""
        }
        return ProjectBinding(id: id, senderId: settings.senderId)
    }

    /// Refuses (exit `code`, 1 unless a saved plan's 5) a state of another project than this run's manifest,
    /// naming both and what to do. A state that records no project yet is bound by the run's next write;
    /// if it holds records, a warning says so, since nothing can tell whose they are.
    func checkProject(
        _ snapshot: StateSnapshot, store: any StateStore, code: Int32 = ExitCodes.error, prefix: String = "", warn: Bool = true
    ) throws {
        guard let project else { return }
        if let reason = snapshot.ledger.project.refusal(manifest: project, state: store.displayName) {
            throw fail(prefix + reason, code: code)
        }
        if warn, snapshot.ledger.project.isEmpty, !project.isEmpty, !snapshot.ledger.isEmpty {
            console.err(
                "warning: the state \(store.displayName) records no project (it was written before states were bound to one); its next "
                    + "write binds it to \(project.description). If another environment used this state too, give each its own before "
                    + "applying (docs/state.md, \"Bound to one project\")")
        }
    }
}
