import FCMCore
import FCMEngine
import FCMViews
import Foundation

extension ApplyRun {
    /// `apply FILE`: the saved plan exactly, or exit 5 naming what differs (see `SavedPlanApplication`).
    func applySaved(_ path: String, expectDigest: String?, progress: RunProgress) async throws {
        let application = try surfacingNow { try SavedPlanApplication(path: path, expectDigest: expectDigest) }
        let saved = application.saved
        RunRecord.current?.project = saved.project.id
        let manifestPaths = manifest.manifests.isEmpty ? saved.manifestPaths : manifest.manifests
        let environment = Console.current.environment
        let (desired, declaredState, loadedManifest) = try surfacingNow {
            try application.checkManifest(paths: manifestPaths, outsidePaths: manifest.outsidePaths, environment: environment) {
                sources, diagnostics in
                DiagnosticPrinter(sources: sources, format: .text).print(diagnostics)
            }
        }
        // With -f, the state is where that manifest says (as for `plan`); without, where the plan recorded it.
        var statePath = state.state
        if statePath == nil, manifest.manifests.isEmpty, let recorded = saved.statePath { statePath = recorded }
        statePath = statePath ?? declaredState
        let resolved = try surfacingNow { try StatePaths.resolve(override: statePath, manifests: manifestPaths) }
        let session = RunStart.opener.open(
            settings: run.settings(), statePath: resolved, project: ProjectBinding.addressed(desired.project, environment: environment),
            progress: progress)
        let store = session.openStore()
        let connection = try surfacingNow { try session.connect(project: desired.project, needsProjectID: false) }
        defer { connection.shutdown() }
        presentation.printPlan(application.plan, deviceNames: saved.registrationNames, unchangedRead: application.unchangedRead)
        if let refusal = RemovalLimit.refusal(application.plan, limit: [saved.maxRemovals, maxRemovals].compactMap { $0 }.min()) {
            throw fail(refusal.headline(Redactor(showTokens: run.showTokens)))
        }
        let operation = "apply \((path as NSString).lastPathComponent)"
        try await surfacing {
            try await session.withStateLock(store, operation: operation, lock: lock, timeout: lockTimeout) { lock in
                let outcome = try await application.apply(
                    transaction(session, service: connection.service, store: store, lock: lock), desired: desired, manifest: loadedManifest)
                try finish(outcome, session: session)
            }
        }
    }
}
