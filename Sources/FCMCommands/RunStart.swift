import FCMClient
import FCMCore
import FCMEngine
import FCMManifest
import FCMReconcile
import FCMViews

/// The start every command that reads a manifest shares: load it (its diagnostics shown in the command's
/// format), settle the run's target, open the session the engine runs in.
enum RunStart {
    /// Prints every diagnostic in the chosen format; fails with exit 1 if any is an error, before anything is sent.
    static func load(_ paths: [String], _ outsidePaths: PathConfinement.Policy, format: OutputFormat = .text) throws -> LoadedManifest {
        let result = ManifestStage.load(paths, outsidePaths: outsidePaths, environment: Console.current.environment)
        DiagnosticPrinter(sources: result.sources, format: format).print(result.diagnostics)
        guard let loaded = result.loaded else {
            throw fail("the manifest has \(result.errorCount) error\(result.errorCount == 1 ? "" : "s"); nothing was sent to FCM")
        }
        return loaded
    }

    /// What the engine says on its way is said on the console the command runs with (stderr, and the
    /// run's record).
    static var notices: Notices {
        let console = Console.current
        return Notices { console.say($0) }
    }

    /// Where every command's session is opened: the world and console it runs in, read here, at the boundary.
    static var opener: SessionOpener {
        SessionOpener(world: World.current, environment: Console.current.environment, notices: notices, signals: Interruption.hooks)
    }

    /// Loads the manifests and opens a session on the state they name (or `--state`). Only `validate` prints
    /// its findings as a JSON document; the other commands' documents carry them.
    static func open(
        manifest: ManifestOptions, state: StateOptions, settings: RunSettings, format: OutputFormat = .text,
        progress: (any ProgressReporting)? = nil, namingDevices: Bool = true
    ) throws -> (Session, RunTarget) {
        // Before the manifest is read: under a lower limit its own files fail to open, with messages about
        // them that hide the cause.
        do {
            _ = try DescriptorBudget.connections(wanted: DescriptorBudget.minimumConnections)
        } catch {
            throw fail("\(error)")
        }
        let loaded = try load(manifest.paths, manifest.outsidePaths, format: format == .github ? .github : .text)
        let environment = Console.current.environment
        let target = try surfacingNow {
            try RunTarget.make(
                loaded, manifestPaths: manifest.paths, stateOverride: state.state, allowEmpty: settings.allowEmpty, environment: environment,
                notices: notices, namingDevices: namingDevices)
        }
        let session = opener.open(
            settings: settings, statePath: target.statePath, project: target.project, progress: progress ?? NoProgress())
        return (session, target)
    }

    /// The FCM connection for a target: a project id is needed only when there are topics to manage.
    static func connect(_ session: Session, _ target: RunTarget) throws -> Connection {
        try surfacingNow { try session.connect(project: target.desired.project, needsProjectID: !target.desired.topics.isEmpty) }
    }
}

extension RunProgress: ProgressReporting {
    package func advance(_ count: ProgressCount) { advance(count.settled, failed: count.failed) }
}
