import ArgumentParser
import FCMBuildInfo
import FCMClient
import FCMCore
import FCMEngine
import FCMManifest
import FCMViews
import Foundation

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
        let sets = paths.isEmpty ? [manifest.paths] : ManifestSets.expandSkippingIncluded(paths, manifest.outsidePaths)
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
            loaded = try RunStart.load(paths, manifest.outsidePaths, format: format)
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
        let desired = try RunStart.load(manifest.paths, manifest.outsidePaths, format: format).desiredState()
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
