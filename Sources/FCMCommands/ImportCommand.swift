import ArgumentParser
import FCMCore
import FCMManifest
import FCMReconcile
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
    func start() async throws -> (Pipeline, LoadedManifest, Connection) {
        var runOptions = run
        runOptions.allowEmpty = true
        let pipeline = Pipeline(manifest: manifest, state: state, options: runOptions)
        let loaded = try Pipeline.load(manifest.paths)
        if let location = loaded.manifest.state?.resolvedLocation, state.state == nil { pipeline.overrideStatePath(location) }
        let desired = loaded.desiredState()
        if let reason = PlatformDeprecations.refusal(usesGroups: false, usesIID: desired.project.topicAPI == .iid, now: World.current.now()) {
            throw fail(reason)
        }
        pipeline.project = Pipeline.project(of: desired.project)
        let store = try pipeline.openStore()
        let early: StateSnapshot
        do {
            early = try await store.read()
        } catch {
            throw fail("\(error)")
        }
        // Quietly: what the read has to say is said when `finish` reads the state again under the lock.
        try pipeline.checkProject(early, store: store, warn: false)
        return (pipeline, loaded, try pipeline.connect(project: desired.project))
    }

    /// Formats `yaml` canonically, writes or prints it, then records `change` in the state (unless a dry run).
    func finish(yaml: String, pipeline: Pipeline, record: @escaping (inout Ledger) -> Void) async throws {
        let console = Console.current
        let formatted: String
        do {
            formatted = try ManifestFormatter.formatChecked(file: output ?? "imported.yaml", bytes: Array(yaml.utf8))
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
        let store = try pipeline.openStore()
        try await pipeline.withStateLock(store, operation: "import", options: locking) { _ in
            let snapshot = try await pipeline.readState(store)
            // Checked again under the lock: the state may have been replaced since `start`.
            try pipeline.checkProject(snapshot, store: store)
            var ledger = snapshot.ledger
            record(&ledger)
            if let project = pipeline.project { ledger.bind(to: project) }
            if let output { try writeImport(formatted, to: output) }
            do {
                ledger.serial = try ledger.nextSerial()
                _ = try await store.write(ledger, replacing: snapshot.version)
            } catch {
                if let output { unlink(output) }
                throw fail("\(error)")
            }
            console.err("Recorded the imported objects in \(store.displayName) (serial \(ledger.serial)) as fcmctl's.")
        }
    }

    /// Mode 0600: an import file holds every registration in full.
    func writeImport(_ text: String, to output: String) throws {
        do {
            try OutputFiles.write(Data(text.utf8), to: output, mode: OutputFiles.secret, exclusive: true)
        } catch {
            throw fail("cannot write \(output): \(error)")
        }
    }

    static func quoted(_ text: String) -> String {
        "\"" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
    }

    /// A device's name when the manifest has one, else the registration itself.
    static func member(_ registration: Registration, names: [Registration: String]) -> String {
        names[registration].map(quoted) ?? quoted(registration.value)
    }
}

struct ImportSubscriptionsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "subscriptions",
        abstract: "Import the topic subscriptions of the manifest's devices (or of registrations listed in a file).")

    @OptionGroup var options: ImportOptions

    @Option(help: ArgumentHelp("Read these registrations (one per line) instead of the manifest's devices.", valueName: "file"))
    var registrations: String?

    func run() async throws {
        let (pipeline, loaded, connection) = try await options.start()
        defer { connection.shutdown() }
        let desired = loaded.desiredState()
        let names = desired.deviceNames
        var who: [Registration]
        if let registrations {
            guard let text = try? String(contentsOfFile: registrations, encoding: .utf8) else { throw fail("cannot read \(registrations)") }
            who = text.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty && !$0.hasPrefix("#") }
                .map { Registration(inferring: $0) }
        } else {
            who = Array(names.keys)
        }
        who = Array(Set(who)).sorted()
        if who.isEmpty { throw fail("no registrations to read: the manifest names no devices; pass --registrations FILE") }
        let observed: ObservedState
        do {
            observed = try await Refresher(service: connection.service, limit: pipeline.concurrency, executor: connection.executor)
                .refresh(groups: [], registrations: Set(who))
        } catch {
            throw fail("reading subscriptions failed: \(error); nothing was imported")
        }
        var topics: [String: [Registration]] = [:]
        for registration in who {
            if case .active(let subscribed)? = observed.registrations[registration] {
                for topic in subscribed { topics[topic, default: []].append(registration) }
            }
        }
        let unreadable = observed.unreadable.count
        if unreadable > 0 { Console.current.err("warning: \(plural(unreadable, "registration")) could not be read and were left out") }
        let day = PlatformDeprecations.dayText(World.current.now())
        var yaml =
            "# Imported by `fcmctl import subscriptions` on \(day) from FCM (\(plural(who.count, "registration")) read); "
            + "fcmctl records these subscriptions as its own.\ntopics:\n"
        for topic in topics.keys.sorted() {
            let members = topics[topic]!
            yaml += "  \(ImportOptions.quoted(topic)):  # \(plural(members.count, "subscription")) found in FCM\n    members:\n"
            for registration in members { yaml += "      - \(ImportOptions.member(registration, names: names))\n" }
        }
        if topics.isEmpty { yaml = "# Imported by `fcmctl import subscriptions` on \(day): no subscriptions found.\n" }
        try await options.finish(yaml: yaml, pipeline: pipeline) { ledger in
            for (topic, members) in topics {
                for registration in members { ledger.recordSubscription(registration, topic: topic) }
            }
        }
    }
}
