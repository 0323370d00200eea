import ArgumentParser
import FCMCore
import FCMEngine
import FCMManifest
import FCMViews
import Foundation

/// `fcmctl import`: adopt what already exists in FCM. Writes the manifest entries in fcmctl's canonical
/// form (the formatter `fmt` uses, devices named when the manifest knows them, comments saying where each
/// entry came from) and records what it imported in the state as fcmctl's, so the next plan is clean and a
/// later removal from the manifest is fcmctl's to make.
struct ImportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import", abstract: "Adopt existing device groups and topic subscriptions into a manifest and the state.",
        subcommands: [ImportGroupCommand.self, ImportSubscriptionsCommand.self])
}

/// What both import commands share: the manifest (project, devices, state), output, dry run.
struct ImportOptions: ParsableArguments {
    @OptionGroup var manifest: ManifestOptions
    @OptionGroup var state: StateOptions
    @OptionGroup var run: RunOptions
    @OptionGroup var locking: LockOptions

    @Option(name: [.customShort("o"), .customLong("output")], help: "Write the YAML to FILE (default: stdout). An existing file is not overwritten.")
    var output: String?

    @Flag(help: "Print the YAML and record nothing in the state.")
    var dryRun = false

    /// The manifest's project and devices; it need not declare groups or topics yet. A state of another
    /// project is refused here, before FCM is asked anything.
    func start() async throws -> (Session, LoadedManifest, Connection) {
        let loaded = try RunStart.load(manifest.paths)
        let desired = loaded.desiredState()
        let environment = Console.current.environment
        let statePath = try surfacingNow {
            try StatePaths.resolve(override: state.state ?? loaded.manifest.state?.resolvedLocation, manifests: manifest.paths)
        }
        var settings = run.settings()
        settings.allowEmpty = true
        let session = Session(
            world: World.current, settings: settings, environment: environment, statePath: statePath,
            project: ProjectBinding.addressed(desired.project, environment: environment), notices: RunStart.notices, signals: Interruption.hooks)
        try await surfacing { try await session.checkImport(usesIID: desired.project.topicAPI == .iid) }
        return (session, loaded, try surfacingNow { try session.connect(project: desired.project, needsProjectID: false) })
    }

    /// Writes the entries in canonical form, prints or writes them, then records `change` in the state
    /// (unless a dry run).
    func finish(_ writer: ManifestWriter, session: Session, record: @escaping (inout Ledger) -> Void) async throws {
        let console = Console.current
        let formatted: String
        do {
            formatted = try writer.formatted(file: output ?? "imported.yaml")
        } catch {
            throw fail("the imported YAML could not be formatted: \(error)")
        }
        if output == nil { console.writeOut(formatted) }
        if dryRun {
            if let output { try writeImport(formatted, to: output) }
            console.err("Dry run: nothing was recorded in the state.")
            return
        }
        // The file claims the records: it is written only once the lock is held, and removed again when the
        // state cannot record them, so a failed import leaves neither a file that lies nor one that blocks
        // the retry.
        if let output, FileManager.default.fileExists(atPath: output) {
            throw fail("\(output) exists; import writes a new file (merge it by hand, or choose another -o)")
        }
        let output = self.output
        let recorded = try await surfacing {
            try await session.recordImport(
                lock: locking.lock, timeout: locking.lockTimeout.duration, claim: { if let output { try writeImport(formatted, to: output) } },
                release: { if let output { unlink(output) } },
                record)
        }
        console.err("Recorded the imported objects in \(recorded.state) (serial \(recorded.serial)) as fcmctl's.")
    }

    /// Mode 0600: an import file holds every registration in full.
    func writeImport(_ text: String, to output: String) throws {
        do {
            try OutputFiles.write(Data(text.utf8), to: output, mode: OutputFiles.secret, exclusive: true)
        } catch {
            throw fail("cannot write \(output): \(error)")
        }
    }
}
