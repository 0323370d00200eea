import ArgumentParser
import FCMCore
import FCMEngine
import FCMManifest
import FCMViews
import Foundation

/// `fcmctl import group`: records existing device groups as fcmctl's. FCM documents no way to list a
/// group's members (wire reference §3), so the members come from the operator's own records: the group's
/// declaration in the manifests, or a file of registrations; FCM is asked only whether the group exists.
struct ImportGroupCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "group",
        abstract: "Import existing device groups: checks each exists in FCM and records the members your own records give.",
        discussion: """
            A group the manifests declare is recorded with its declared members and nothing is written (what `plan` \
            asks for when it names a declared group that exists in FCM but not in the state). Any other group is \
            written with the members of --members FILE (one registration per line) for a single group, or of a \
            member export that answers (--group-export-url), and recorded with them. fcmctl cannot check listed \
            members against FCM: the next apply adds a listed member that is missing (no change if present); a \
            member you do not list stays in the group unseen.
            """)

    @OptionGroup var options: ImportOptions

    @Option(help: ArgumentHelp("The group's members, one registration per line ('#' comments), for one group.", valueName: "file"))
    var members: String?

    @Argument(help: "Group names (notification_key_name).")
    var names: [String]

    func validate() throws {
        if members != nil && Set(names).count != 1 { throw ValidationError("--members names the members of one group: give one group name") }
    }

    func run() async throws {
        let (session, loaded, connection) = try await options.start()
        defer { connection.shutdown() }
        let listed = try members.map(Self.readMembers)
        try await options.finish(
            .groups(names, listed: listed, source: members), session: session, loaded: loaded, connection: connection)
    }

    static func readMembers(_ path: String) throws -> Set<Registration> {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { throw fail("cannot read \(path)") }
        let lines = text.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }
        let members = Set(lines.filter { !$0.isEmpty && !$0.hasPrefix("#") }.map(Registration.init(inferring:)))
        guard (1...GroupStepPlanner.memberLimit).contains(members.count) else {
            throw fail("\(path) lists \(members.count) registrations; a device group has 1 to \(GroupStepPlanner.memberLimit) members")
        }
        return members
    }
}
