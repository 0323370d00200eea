import ArgumentParser

/// `--max-removals N`: an apply that would remove more than N subscriptions or group members is refused
/// before anything is sent. Renaming a topic by mistake should not silently unsubscribe a fleet.
struct RemovalRails: ParsableArguments {
    @Option(help: "Refuse, before sending anything, a plan that removes more than this many subscriptions and group members.")
    var maxRemovals: Int?

    func validate() throws {
        if let maxRemovals, maxRemovals < 0 { throw ValidationError("--max-removals must not be negative") }
    }
}
