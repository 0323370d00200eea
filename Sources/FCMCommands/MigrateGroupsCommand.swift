import ArgumentParser
import FCMCore
import FCMEngine
import FCMManifest
import FCMViews

/// `fcmctl migrate groups`: the road off FCM's device groups (removed 2027-09-29). The use case is the
/// engine's (`GroupMigration`): rewrite, fan-out check, then a targeted apply that deletes the FCM groups.
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
        let migration = GroupMigration(try RunStart.load(manifest.paths, manifest.outsidePaths))
        let migrating = migration.fcmGroups
        if migrating.isEmpty {
            console.out("No FCM device groups to migrate: every group is already local.")
        } else {
            try surfacingNow { try migration.rewrite(migrating) }
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
        let names = migration.groupsToCheck(migrated: migrating)
        try await checkFanOut(names, console: console)
        // Defaults as the parser gives them: a parsable type made without parsing has no values to read.
        let deletion = ApplyRun(
            manifest: manifest, state: state, run: run, output: try OutputOptions.parse([]), lock: true, lockTimeout: .zero,
            targeting: GroupMigration.deletion(of: names), autoApprove: true)
        console.out("The fan-out check passed; deleting the FCM device groups:")
        try await deletion.apply(progress: .silent)
    }

    /// The manifests as rewritten: the migrated groups are local groups now.
    func checkFanOut(_ names: [String], console: Console) async throws {
        let desired = try RunStart.load(manifest.paths, manifest.outsidePaths).desiredState()
        let session = RunStart.opener.open(settings: run.settings())
        let connection = try surfacingNow { try session.connect(project: desired.project, needsProjectID: false) }
        defer { connection.shutdown() }
        guard let sender = connection.live else { throw fail("the fan-out check needs the FCM client; this world has none") }
        let presentation = FanOutPresentation(console: console, redactor: Redactor(showTokens: run.showTokens), names: desired.deviceNames)
        try await surfacing { try await session.checkFanOut(names, desired: desired, sender: sender, report: presentation.show) }
    }
}
