import FCMCore

extension ProjectBinding {
    /// Why a run for `manifest` must not use a state bound to `self`, or nil when it may. Says what to do:
    /// each environment keeps its own state.
    package func refusal(manifest: ProjectBinding, state location: String) -> String? {
        guard conflicts(with: manifest) else { return nil }
        return "the state \(location) belongs to project \(description), but the manifest is for project \(manifest.description). "
            + "A state is never shared between projects: its records would read as another project's subscriptions to remove. "
            + "Nothing was read from FCM or sent. Pass --state PATH with this environment's own state (or declare `state:` in its manifest)"
    }
}
