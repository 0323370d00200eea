import ArgumentParser
import FCMBuildInfo
import FCMClient
import FCMCore
import FCMManifest
import FCMViews
import Foundation

/// `fcmctl`: FCM device groups and topic subscriptions as code.
package struct FCMCtl: AsyncParsableCommand {
    package static let version = BuildInfo.version

    package static let configuration = CommandConfiguration(
        commandName: "fcmctl",
        abstract: "Keep Firebase Cloud Messaging device groups and topic subscriptions as code.",
        discussion: """
            Exit codes: 0 success (plan: no changes with --detailed-exitcode), 1 error, 2 changes present \
            (--detailed-exitcode), 3 apply partly failed (re-running is safe), 4 the state is locked by another \
            run (the holder is printed; see --lock-timeout and `state unlock`), 5 a saved plan is stale (the state, \
            the manifest or what it touches in FCM changed since `plan -out`; nothing was sent), 64 usage error, \
            130 / 143 interrupted by SIGINT / SIGTERM (an apply stops sending, writes its state and releases its lock \
            first; re-running continues).
            """,
        version: VersionCommand.text(),
        subcommands: [
            ValidateCommand.self, FmtCommand.self, PlanCommand.self, ApplyCommand.self, DriftCommand.self, ShowCommand.self, ImportCommand.self,
            MigrateCommand.self,
            StateCommand.self,
            SendCommand.self,
            VersionCommand.self,
        ])

    package init() {}

    /// Parses and runs a command line; returns the process exit code. `main` and the end-to-end tests
    /// share this path, so what the tests see is what users get.
    package static func execute(_ arguments: [String]) async -> Int32 {
        do {
            // A clock that cannot be read must not silently become today: it decides deprecation refusals.
            if let text = Console.current.environment["FCMCTL_NOW"], !text.isEmpty, World.parseDay(text) == nil {
                Console.current.err("error: FCMCTL_NOW='\(text)' is not a date (2027-09-30) or an ISO 8601 time (2027-09-30T12:00:00Z)")
                return ExitCodes.usage
            }
            var command = try parseAsRoot(arguments)
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
            return ExitCodes.success
        } catch let code as ExitCode {
            return code.rawValue
        } catch {
            let code = exitCode(for: error)
            let message = fullMessage(for: error)
            if code == .success {
                Console.current.out(message)
            } else if !message.isEmpty {
                Console.current.err(message)
            }
            return code == .validationFailure ? ExitCodes.usage : code.rawValue
        }
    }
}

struct VersionCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "version",
        abstract: "Print fcmctl's version, the commit and day it was built, and the Swift and libcurl versions.")

    enum Format: String, ExpressibleByArgument, CaseIterable {
        case text
        case json
    }

    @Option(help: "text (one line, as --version prints it), or json (buildDate, commit, libcurl, swift, version).")
    var format: Format = .text

    func run() throws {
        switch format {
        case .text: Console.current.out(Self.text())
        case .json: Console.current.writeOut(Self.json())
        }
    }

    /// `fcmctl 0.1.0 (commit 0123456789ab, built 2025-06-01, Swift 6.3.1, libcurl 7.88.1)`; also `--version`.
    static func text() -> String {
        let summary = BuildInfo.summary("fcmctl")
        return "\(summary.dropLast()), Swift \(BuildInfo.swiftVersion), libcurl \(LibcurlVersion.current))"
    }

    /// One object, keys sorted, two-space indentation, like every other JSON fcmctl writes.
    static func json() -> String {
        JSONTree.object([
            ("buildDate", .string(BuildInfo.date)),
            ("commit", .string(BuildInfo.commit)),
            ("libcurl", .string(LibcurlVersion.current)),
            ("swift", .string(BuildInfo.swiftVersion)),
            ("version", .string(BuildInfo.version)),
        ]).serialized()
    }
}

struct ValidateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "validate", abstract: "Check manifests without contacting FCM.")

    @OptionGroup var manifest: ManifestOptions

    @Argument(help: "Manifest files or directories; directories are searched recursively, each manifest directory checked on its own.")
    var paths: [String] = []

    @Option(help: "How to print problems: text (stderr, with the source line), json, or github (annotations, and the step summary).")
    var format: OutputFormat = .text

    @Flag(
        help: ArgumentHelp(
            "Print the body of fcm-emulator's POST /emulator/v1/registrations that makes the manifest's registrations known.",
            discussion: "The emulator knows no registration until told; redacted unless --show-tokens."))
    var emulatorSeed = false

    @Flag(help: "Show registrations in full instead of redacted.")
    var showTokens = false

    func run() throws {
        if emulatorSeed { return try printSeed() }
        let sets = paths.isEmpty ? [manifest.paths] : ManifestSets.expandSkippingIncluded(paths)
        if sets.isEmpty { throw fail("no manifests found under \(paths.joined(separator: ", "))") }
        var failed: [String] = []
        for set in sets {
            do {
                try validate(set)
            } catch let code as ExitCode where sets.count > 1 && code.rawValue == ExitCodes.error {
                failed += set
            }
        }
        if !failed.isEmpty { throw fail("\(failed.count) of \(sets.count) manifests are not valid: \(failed.joined(separator: ", "))") }
    }

    func validate(_ paths: [String]) throws {
        let loaded: LoadedManifest
        do {
            loaded = try Pipeline.load(paths, format: format)
        } catch {
            if format == .github { appendStepSummary(paths, valid: false) }
            throw error
        }
        if format == .github { appendStepSummary(paths, valid: true) }
        if format == .json { return }
        let subscriptions = loaded.resolution.topicMembers.values.reduce(0) { $0 + $1.count }
        let groupMembers = loaded.resolution.groupMembers.values.reduce(0) { $0 + $1.count }
        Console.current.out(
            "\(paths.joined(separator: ", ")): the manifest is valid: \(plural(loaded.manifest.devices.count, "device")), "
                + "\(plural(loaded.manifest.groups.count, "group")) (\(plural(groupMembers, "member"))), "
                + "\(plural(loaded.manifest.topics.count, "topic")) (\(plural(subscriptions, "subscription"))).")
    }

    func printSeed() throws {
        let desired = try Pipeline.load(manifest.paths, format: format).desiredState()
        var all = Set(desired.deviceNames.keys)
        for group in desired.groups.values { all.formUnion(group.members) }
        for group in desired.localGroups.values { all.formUnion(group.members) }
        for topic in desired.topics.values { all.formUnion(topic.members) }
        let redactor = Redactor(showTokens: showTokens)
        let items: [JSONTree] = all.sorted().map { .object([(($0.kind == .fid ? "fid" : "token"), .string(redactor($0)))]) }
        let tree = JSONTree.object([
            ("project", .string(desired.project.id)), ("sender_id", .string(desired.project.senderId)), ("registrations", .array(items)),
        ])
        Console.current.out(tree.serialized())
    }

    /// One line per manifest on the run's summary page; the annotations carry the details.
    func appendStepSummary(_ paths: [String], valid: Bool) {
        guard let path = Console.current.environment["GITHUB_STEP_SUMMARY"], !path.isEmpty, let handle = FileHandle(forWritingAtPath: path) else {
            return
        }
        defer { try? handle.close() }
        handle.seekToEndOfFile()
        let verdict = valid ? "valid" : "**not valid**: see the annotations"
        handle.write(Data("- `fcmctl validate` \(MarkdownText.inline(paths.joined(separator: ", "))): \(verdict)\n".utf8))
    }
}
