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
            Members come from the group's declaration in the manifests, or from --members FILE (one registration \
            per line) for a single group. With --group-export-url, an export probe that answers is used instead. \
            fcmctl cannot check listed members against FCM: the next apply adds a listed member that is missing \
            (no change if present); a member you do not list stays in the group unseen.
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
        let desired = loaded.desiredState()
        let listed = try members.map(Self.readMembers)
        var groups: [(name: String, members: Set<Registration>, source: String)] = []
        for name in Set(self.names).sorted() {
            let key: String
            do {
                guard let found = try await connection.service.groupKey(name: name) else {
                    throw fail("group \(name) does not exist in FCM; nothing was imported")
                }
                key = found
            } catch let code as ExitCode {
                throw code
            } catch {
                throw fail("reading group \(name) failed: \(error); nothing was imported")
            }
            if let listed {
                groups.append((name, listed, "listed in \(members ?? "")"))
            } else if let exported = try? await connection.service.groupMembers(name: name, key: key) {
                groups.append((name, exported, "as the member export answered"))
            } else if let declared = desired.groups[name], !declared.members.isEmpty {
                groups.append((name, declared.members, "as declared in the manifests"))
            } else {
                throw fail(
                    "FCM documents no way to list the members of group \(name): declare it in a manifest with its members, "
                        + "or pass --members FILE; nothing was imported")
            }
        }
        let day = PlatformDeprecations.dayText(session.world.now())
        var writer = ManifestWriter(header: [
            "Imported by `fcmctl import group` on \(day): each group exists in FCM; members from your records "
                + "(FCM cannot list them). fcmctl records these groups as its own."
        ])
        for group in groups {
            writer.add(
                .init(
                    name: group.name, comment: "\(plural(group.members.count, "member")), \(group.source)",
                    members: group.members.sorted().map { desired.deviceNames[$0] ?? $0.value }),
                to: .groups)
        }
        try await options.finish(writer, session: session) { ledger in
            for group in groups { ledger.recordGroup(group.name, members: group.members) }
        }
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
