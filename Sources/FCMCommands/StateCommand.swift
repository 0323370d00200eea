import ArgumentParser
import FCMCore
import FCMEngine
import FCMManifest
import FCMViews

/// `fcmctl state …`: look at and repair fcmctl's own records without touching FCM.
struct StateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "state", abstract: "Inspect and repair fcmctl's state. Never sends anything to FCM.",
        subcommands: [
            StateListCommand.self, StateShowCommand.self, StateRemoveCommand.self, StatePullCommand.self, StatePushCommand.self,
            StateUnlockCommand.self, StateMigrateCommand.self,
        ])
}

/// Where the state is: `--state`, else the manifest's `state.path`, else `.fcmctl/state.json` beside it.
struct StateLocation: ParsableArguments {
    @OptionGroup var manifest: ManifestOptions
    @OptionGroup var state: StateOptions

    @Flag(help: "Show registrations in full instead of redacted.")
    var showTokens = false

    /// `writing`: the command writes the state, so the manifest's project is learned too (the state must be
    /// that project's, and the write records it); reading commands look at any state.
    func session(writing: Bool = false) throws -> Session {
        var statePath = state.state
        var project: ProjectBinding?
        let environment = Console.current.environment
        if state.state == nil || writing {
            // The manifest only says where the state is and whose it is; a manifest with errors still has a
            // default place, and without a manifest (only --state) the project is not known and not checked.
            let result = ManifestLoader(outsidePaths: manifest.outsidePaths).load(paths: manifest.paths)
            if state.state == nil, let location = result.manifest?.state?.resolvedLocation { statePath = location }
            if writing, let declared = result.manifest?.project {
                project = ProjectBinding.addressed(
                    ProjectSettings(id: declared.id?.value ?? "", senderId: declared.senderId?.value ?? ""), environment: environment)
            }
        }
        let resolved = try surfacingNow { try StatePaths.resolve(override: statePath, manifests: manifest.manifests) }
        var settings = RunSettings()
        settings.showTokens = showTokens
        return RunStart.opener.open(settings: settings, statePath: resolved, project: project)
    }
}

extension Address {
    /// An address in the state, or a usage error naming the forms.
    init(parsing text: String) throws {
        guard let address = Address(text) else { throw ValidationError("'\(text)' is not a state address: use \(Address.forms)") }
        self = address
    }
}

func readSnapshot(_ session: Session) async throws -> (any StateStore, StateSnapshot) {
    let store = session.openStore()
    let snapshot = try await surfacing { try await session.readState(store) }
    if snapshot.version == nil && snapshot.ledger.isEmpty {
        throw fail("no state at \(store.displayName): nothing has been applied there yet")
    }
    return (store, snapshot)
}
