import FCMCore

/// The one way to open a `Session`: what every run takes from outside it (the world, the environment, where
/// its notices go, how signals reach it), given once by the command boundary; each command adds only what
/// is its own (settings, the state's place, the project, progress).
package struct SessionOpener: Sendable {
    package var world: World
    package var environment: [String: String]
    package var notices: Notices
    package var signals: SignalHooks

    package init(world: World, environment: [String: String], notices: Notices, signals: SignalHooks = .none) {
        self.world = world
        self.environment = environment
        self.notices = notices
        self.signals = signals
    }

    /// A session on the state at `statePath` (empty: a run that reads no state, such as `send`) for `project`
    /// (nil: not known, so not checked, nor recorded).
    package func open(
        settings: RunSettings, statePath: String = "", project: ProjectBinding? = nil, progress: any ProgressReporting = NoProgress()
    ) -> Session {
        Session(
            world: world, settings: settings, environment: environment, statePath: statePath, project: project, notices: notices,
            progress: progress, signals: signals)
    }
}
