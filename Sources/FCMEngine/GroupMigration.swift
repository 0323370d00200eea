import FCMClient
import FCMCore
import FCMManifest
import Foundation

/// `migrate groups`, the road off FCM's device groups (removed 2027-09-29): each FCM group of the manifest
/// rewritten as a local group (`mode: local`, comments kept); with `--apply`, a fan-out to every migrated
/// group checked (validate only, nothing delivered), and only if every member answered, the FCM groups
/// deleted by an apply targeted at exactly them.
package struct GroupMigration {
    package let loaded: LoadedManifest

    package init(_ loaded: LoadedManifest) { self.loaded = loaded }

    /// The manifest's FCM groups (the default mode's, where a group names none), by name.
    package var fcmGroups: [ManifestGroup] {
        let defaultMode = loaded.manifest.defaults?.groupMode?.value ?? .fcm
        return loaded.manifest.groups.values.filter { ($0.mode?.value ?? defaultMode) == .fcm }.sorted { $0.name < $1.name }
    }

    /// The groups `--apply` checks and deletes: those migrated now, or, when every group was local already (a
    /// rerun after the rewrite), every local group.
    package func groupsToCheck(migrated: [ManifestGroup]) -> [String] {
        migrated.isEmpty ? loaded.desiredState().localGroups.keys.sorted() : migrated.map(\.name)
    }

    /// The apply that deletes the FCM groups: exactly these groups, nothing else in the manifest.
    package static func deletion(of names: [String]) -> PlanTargeting {
        PlanTargeting(targets: names.map { Address.group($0) }, excludes: [])
    }

    /// Adds `mode: local` under each group's key, then lets the formatter put it in canonical order.
    package func rewrite(_ groups: [ManifestGroup]) throws {
        for (file, inFile) in Dictionary(grouping: groups, by: { $0.location.file }).sorted(by: { $0.key < $1.key }) {
            guard let bytes = loaded.sources[file] else { continue }
            var lines = String(decoding: bytes, as: UTF8.self).components(separatedBy: "\n")
            for group in inFile.sorted(by: { $0.location.line > $1.location.line }) {
                let index = group.location.line - 1
                guard index + 1 < lines.count, let child = lines[(index + 1)...].first(where: { Self.isContent($0) }),
                    Self.indentation(child) > Self.indentation(lines[index]), !child.trimmingCharacters(in: .whitespaces).hasPrefix("-")
                else {
                    throw EngineFailure(
                        "\(file):\(group.location.line): \(Address.group(group.name)) is not written as a block mapping (members: …); "
                            + "write it as `\(group.name):` with `members:` below it, then run migrate again. Nothing was changed")
                }
                lines.insert(String(repeating: " ", count: Self.indentation(child)) + "mode: local", at: index + 1)
            }
            let text: String
            do {
                text = try ManifestFormatter.formatChecked(file: file, bytes: Array(lines.joined(separator: "\n").utf8))
            } catch {
                throw EngineFailure("\(file): cannot rewrite it keeping its comments: \(error). Nothing was changed in it")
            }
            do {
                try Data(text.utf8).write(to: URL(fileURLWithPath: file), options: .atomic)
            } catch {
                throw EngineFailure("cannot write \(file): \(error.localizedDescription)")
            }
        }
    }

    static func isContent(_ line: String) -> Bool {
        let trimmed = line.trimmingCharacters(in: .whitespaces)
        return !trimmed.isEmpty && !trimmed.hasPrefix("#")
    }

    static func indentation(_ line: String) -> Int { line.prefix { $0 == " " }.count }
}

extension Session {
    /// Every member of every named local group of `desired` must accept a message (validate only) before
    /// FCM's groups go: `report` is told each group's answers as they come; a group with a failure (or a
    /// fan-out that could not run) ends the check, and the FCM groups are kept. Unregistered members are drift,
    /// not a failure.
    package func checkFanOut(
        _ names: [String], desired: DesiredState, sender: any MessageSender, report: (FanOutReport) -> Void
    ) async throws {
        let fanOut = MessageFanOut(service: sender, parallelism: settings.parallelism, clock: world.clock)
        for name in names {
            guard let group = desired.localGroups[name] else { continue }
            let message = OutgoingMessage(target: .token(""), title: "fcmctl migration check", body: nil, image: nil, data: [:])
            let answered = try? await fanOut.send(message, to: group, validateOnly: true)
            if let answered { report(answered) }
            guard let answered, answered.failed == 0 else {
                throw EngineFailure(
                    "the fan-out check of \(Address.group(name)) failed; the FCM device groups were kept. Fix the failures above and run again")
            }
        }
    }
}
