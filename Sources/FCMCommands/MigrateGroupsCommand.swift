import ArgumentParser
import FCMClient
import FCMCore
import FCMEngine
import FCMManifest
import FCMViews
import Foundation

/// `fcmctl migrate groups`: the road off FCM's device groups (removed 2027-09-29). Rewrites each FCM group
/// of the manifest as a local group (`mode: local`, comments kept); `send --group` then fans out to its
/// members. With `--apply` it then checks a fan-out to every migrated group (validate only, nothing
/// delivered) and only if every member answered deletes the FCM groups, as a targeted apply.
struct MigrateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "migrate", abstract: "Move off deprecated FCM features.", subcommands: [MigrateGroupsCommand.self])
}

struct MigrateGroupsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "groups",
        abstract: "Rewrite the manifest's FCM device groups as local groups; --apply also deletes the FCM groups after a fan-out check.")

    @OptionGroup var manifest: ManifestOptions
    @OptionGroup var state: StateOptions
    @OptionGroup var run: RunOptions

    @Flag(help: "After rewriting, check a fan-out (validate only) to every migrated group, then delete the FCM groups.")
    var apply = false

    func run() async throws {
        let console = Console.current
        let loaded = try RunStart.load(manifest.paths, manifest.outsidePaths)
        let defaultMode = loaded.manifest.defaults?.groupMode?.value ?? .fcm
        let migrating = loaded.manifest.groups.values.filter { ($0.mode?.value ?? defaultMode) == .fcm }.sorted { $0.name < $1.name }
        if migrating.isEmpty {
            console.out("No FCM device groups to migrate: every group is already local.")
        } else {
            try rewrite(migrating, sources: loaded.sources)
            console.out(
                "Rewrote \(plural(migrating.count, "group")) as local groups (mode: local): \(migrating.map { "\(Address.group($0.name))" }.joined(separator: ", "))."
            )
        }
        guard apply else {
            if !migrating.isEmpty {
                console.out(
                    "Next: `fcmctl migrate groups --apply` checks a fan-out to each and then deletes the FCM groups (or review `fcmctl plan`).")
            }
            return
        }
        let names = migrating.isEmpty ? loaded.desiredState().localGroups.keys.sorted() : migrating.map(\.name)
        try await checkFanOut(names)
        // Defaults as the parser gives them: a parsable type made without parsing has no values to read.
        let target = try TargetOptions.parse(names.flatMap { ["--target", "\(Address.group($0))"] })
        let deletion = ApplyRun(
            manifest: manifest, state: state, run: run, output: try OutputOptions.parse([]), locking: try LockOptions.parse([]),
            target: target, autoApprove: true)
        console.out("The fan-out check passed; deleting the FCM device groups:")
        try await deletion.apply(progress: .silent)
    }

    /// Adds `mode: local` under each group's key, then lets the formatter put it in canonical order.
    func rewrite(_ groups: [ManifestGroup], sources: [String: [UInt8]]) throws {
        for (file, inFile) in Dictionary(grouping: groups, by: { $0.location.file }).sorted(by: { $0.key < $1.key }) {
            guard let bytes = sources[file] else { continue }
            var lines = String(decoding: bytes, as: UTF8.self).components(separatedBy: "\n")
            for group in inFile.sorted(by: { $0.location.line > $1.location.line }) {
                let index = group.location.line - 1
                guard index + 1 < lines.count, let child = lines[(index + 1)...].first(where: { Self.isContent($0) }),
                    Self.indentation(child) > Self.indentation(lines[index]), !child.trimmingCharacters(in: .whitespaces).hasPrefix("-")
                else {
                    throw fail(
                        "\(file):\(group.location.line): \(Address.group(group.name)) is not written as a block mapping (members: …); "
                            + "write it as `\(group.name):` with `members:` below it, then run migrate again. Nothing was changed")
                }
                lines.insert(String(repeating: " ", count: Self.indentation(child)) + "mode: local", at: index + 1)
            }
            let text: String
            do {
                text = try ManifestFormatter.formatChecked(file: file, bytes: Array(lines.joined(separator: "\n").utf8))
            } catch {
                throw fail("\(file): cannot rewrite it keeping its comments: \(error). Nothing was changed in it")
            }
            do {
                try Data(text.utf8).write(to: URL(fileURLWithPath: file), options: .atomic)
            } catch {
                throw fail("cannot write \(file): \(error.localizedDescription)")
            }
        }
    }

    static func isContent(_ line: String) -> Bool {
        let trimmed = line.trimmingCharacters(in: .whitespaces)
        return !trimmed.isEmpty && !trimmed.hasPrefix("#")
    }

    static func indentation(_ line: String) -> Int { line.prefix { $0 == " " }.count }

    /// Every member of every migrated group must accept a message (validate only) before FCM's groups go.
    func checkFanOut(_ names: [String]) async throws {
        let loaded = try RunStart.load(manifest.paths, manifest.outsidePaths)
        let desired = loaded.desiredState()
        let session = Session(
            world: World.current, settings: run.settings(), environment: Console.current.environment, statePath: "", project: nil,
            notices: RunStart.notices)
        let connection = try surfacingNow { try session.connect(project: desired.project, needsProjectID: false) }
        defer { connection.shutdown() }
        guard let service = connection.live else { throw fail("the fan-out check needs the FCM client; this world has none") }
        for name in names {
            guard let group = desired.localGroups[name] else { continue }
            let message = OutgoingMessage(target: .token(""), title: "fcmctl migration check", body: nil, image: nil, data: [:])
            do {
                try await LocalGroupFanOut(service: service, parallelism: run.parallelism, redactor: Redactor(showTokens: run.showTokens))
                    .send(message, to: group, names: desired.deviceNames, validateOnly: true)
            } catch {
                throw fail(
                    "the fan-out check of \(Address.group(name)) failed; the FCM device groups were kept. Fix the failures above and run again")
            }
        }
    }
}
