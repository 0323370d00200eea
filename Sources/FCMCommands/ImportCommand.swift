import ArgumentParser
import FCMCore
import FCMEngine
import FCMManifest
import FCMViews
import Foundation

/// `fcmctl import`: adopt what already exists in FCM. Writes manifest entries for what the manifests do not
/// declare yet, in fcmctl's canonical form (the formatter `fmt` uses, devices named when the manifest knows
/// them, comments saying where each entry came from), proves they validate beside the manifests, and records
/// in the state exactly what they declare, so the next plan is clean and a later removal from the manifest
/// is fcmctl's to make. The use case is the engine's (`Session.runImport`).
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

    @Option(
        name: [.customShort("o"), .customLong("output")],
        help: ArgumentHelp(
            "Write the YAML to FILE, a new file beside the manifest that declares the project, and record what it declares. "
                + "Without it the YAML is printed and nothing it declares is recorded.",
            valueName: "file"))
    var output: String?

    @Flag(help: "Print (or write, with -o) the YAML and record nothing in the state.")
    var dryRun = false

    /// The manifest's project and devices; it need not declare groups or topics yet. A state of another
    /// project is refused here, before FCM is asked anything.
    func start() async throws -> (Session, LoadedManifest, Connection) {
        let loaded = try RunStart.load(manifest.paths, manifest.outsidePaths)
        let desired = loaded.desiredState()
        let environment = Console.current.environment
        let statePath = try surfacingNow {
            try StatePaths.resolve(override: state.state ?? loaded.manifest.state?.resolvedLocation, manifests: manifest.paths)
        }
        var settings = run.settings()
        settings.allowEmpty = true
        let session = RunStart.opener.open(
            settings: settings, statePath: statePath, project: ProjectBinding.addressed(desired.project, environment: environment))
        try await surfacing { try await session.checkImport(usesIID: desired.project.topicAPI == .iid) }
        return (session, loaded, try surfacingNow { try session.connect(project: desired.project, needsProjectID: false) })
    }

    /// Runs the import use case and says how it ended: the YAML on stdout without -o, the rest on stderr.
    func finish(_ subject: ImportSubject, session: Session, loaded: LoadedManifest, connection: Connection) async throws {
        let console = Console.current
        let request = ImportRequest(
            paths: manifest.paths, loaded: loaded, output: output, dryRun: dryRun, lock: locking.lock, lockTimeout: locking.lockTimeout.duration)
        let output = self.output
        let outcome = try await surfacing {
            try await session.runImport(
                request, subject, service: connection.service, claim: { text in if let output { try writeImport(text, to: output) } },
                release: { if let output { unlink(output) } })
        }
        if output == nil { console.writeOut(outcome.text) }
        if let output, !outcome.hasEntries { console.err("Nothing to write: \(output) was not written.") }
        if let written = outcome.written { console.err("Wrote \(written).") }
        if dryRun {
            console.err("Dry run: nothing was recorded in the state.")
            return
        }
        if outcome.printedOnly {
            console.err(
                "Nothing the printed YAML declares was recorded: pass -o FILE (beside your manifests) to write it and record it as fcmctl's.")
        }
        if let recorded = outcome.recorded {
            let what = [
                outcome.recordedSubscriptions > 0 ? plural(outcome.recordedSubscriptions, "subscription") : nil,
                outcome.recordedGroups > 0 ? plural(outcome.recordedGroups, "group") : nil,
            ].compactMap { $0 }.joined(separator: " and ")
            console.err("Recorded \(what.isEmpty ? "the imported objects" : what) in \(recorded.state) (serial \(recorded.serial)) as fcmctl's.")
        } else if !outcome.printedOnly {
            console.err("Nothing new to record in the state.")
        }
    }

    /// Mode 0600: an import file holds every registration in full.
    func writeImport(_ text: String, to output: String) throws {
        do {
            try OutputFiles.write(Data(text.utf8), to: output, mode: OutputFiles.secret, exclusive: true)
        } catch {
            throw EngineFailure("cannot write \(output): \(error); nothing was recorded")
        }
    }
}
