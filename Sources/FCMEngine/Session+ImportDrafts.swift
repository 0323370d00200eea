import FCMCore
import FCMManifest
import FCMReconcile

extension Session {
    /// `import subscriptions`: reads the registrations' subscriptions (and those of every registration the
    /// next plan reads, to check what it would do), and drafts one entry per topic the manifests do not
    /// declare. A subscription to a declared topic is not written: a declaration lives in one file, and
    /// import writes a new one. A declared member's subscription is already declared; any other is the app's,
    /// said here and in the file, and never recorded.
    func draftSubscriptions(
        _ subjects: [Registration], desired: DesiredState, ledger: Ledger, output: String?, service: any FCMService
    ) async throws -> ImportDraft {
        let scope = RefreshScope(desired: desired, ledger: ledger, mode: .all).registrations
        let read = Set(subjects).union(scope)
        let extra = read.count - Set(subjects).count
        notices(
            "Reading the subscriptions of \(plural(subjects.count, "registration"))"
                + (extra > 0 ? " (and of \(extra) more that the next plan reads, to check what it would do)" : "") + "…")
        let observed: ObservedState
        do {
            observed = try await Refresher(service: service, limit: concurrency, executor: executor).refresh(groups: [], registrations: read)
        } catch {
            throw EngineFailure("reading subscriptions failed: \(error); nothing was imported")
        }
        let unreadable = subjects.filter { observed.isUnreadable($0) }.count
        if unreadable > 0 { notices.warning("\(plural(unreadable, "registration")) could not be read and were left out") }
        var found: [String: Set<Registration>] = [:]
        var declaredAlready: [String: Int] = [:]
        var undeclared: [String: [Registration]] = [:]
        var fcmctls = 0
        for registration in subjects {
            guard case .active(let topics)? = observed.registrations[registration] else { continue }
            for topic in topics {
                if ledger.topics[topic]?.contains(registration) == true || ledger.pending.subscriptions[topic]?.contains(registration) == true {
                    fcmctls += 1
                } else if let declared = desired.topics[topic] {
                    if declared.members.contains(registration) {
                        declaredAlready[topic, default: 0] += 1
                    } else {
                        undeclared[topic, default: []].append(registration)
                    }
                } else {
                    found[topic, default: []].insert(registration)
                }
            }
        }
        let day = PlatformDeprecations.dayText(world.now())
        var draft = ImportDraft(header: [
            found.isEmpty
                ? "Imported by `fcmctl import subscriptions` on \(day): "
                    + (fcmctls + declaredAlready.count + undeclared.count == 0
                        ? "no subscriptions found." : "no subscriptions found that the manifests do not declare already.")
                : "Imported by `fcmctl import subscriptions` on \(day) from FCM (\(plural(subjects.count, "registration")) read); "
                    + "fcmctl records these subscriptions as its own."
        ])
        draft.observed = observed
        draft.subjects = Set(subjects)
        for topic in found.keys.sorted() {
            let members = found[topic]!
            draft.entries.append((.topics, Self.entry(topic, "\(plural(members.count, "subscription")) found in FCM", members, desired)))
            draft.subscriptions[topic] = members
        }
        if fcmctls > 0 {
            draft.notes.append("\(plural(fcmctls, "subscription")) found are fcmctl's already (recorded in the state): nothing to import.")
        }
        if !declaredAlready.isEmpty {
            let count = declaredAlready.values.reduce(0, +)
            draft.notes.append(
                "\(plural(count, "subscription")) found are declared already (\(Self.topicList(declaredAlready.keys))): "
                    + "nothing to write for them, and import records only what it writes.")
        }
        let redactor = Redactor(showTokens: settings.showTokens)
        for topic in undeclared.keys.sorted() {
            let declared = desired.topics[topic]!
            let members = undeclared[topic]!
            let names = members.map { desired.deviceNames[$0] ?? redactor($0) }.sorted()
            let place = declared.location.map { "\($0.file):\($0.line)" } ?? "the manifests"
            let treatment =
                switch declared.ownership {
                case .additive: "fcmctl never touches a subscription it did not make"
                case .observe: "fcmctl never changes an observed topic"
                case .authoritative: "no plan reads these registrations, so this authoritative topic leaves them"
                }
            draft.notes.append(
                "topic/\(topic) is declared at \(place) without \(plural(members.count, "registration")) FCM shows subscribed "
                    + "(\(names.prefix(5).joined(separator: ", "))\(names.count > 5 ? " and \(names.count - 5) more" : "")): not imported, "
                    + "since import never edits a declaration; they stay the apps' own (\(treatment)).")
            let seen = declared.location.map { location in
                "\(output.map { Self.relative(location.file, from: Self.directory(of: $0)) } ?? location.file):\(location.line)"
            }
            draft.header.append(
                "Not written here: \(plural(members.count, "subscription")) to topic/\(topic), declared at \(seen ?? place) "
                    + "(\(declared.ownership.rawValue)), which import does not edit; they stay the apps' own.")
        }
        return draft
    }

    /// `import group`: checks each group exists in FCM. A group the manifests declare is recorded from its
    /// declaration (nothing is written: that is what `plan` asks for, "import it"); any other is written with
    /// the members the operator's records give (`--members`, a member export that answers, or the state's
    /// record) and recorded with them.
    func draftGroups(
        _ names: [String], listed: Set<Registration>?, source: String?, desired: DesiredState, ledger: Ledger, service: any FCMService
    ) async throws -> ImportDraft {
        let observed: ObservedState
        do {
            observed = try await Refresher(service: service, limit: concurrency, executor: executor).refresh(groups: Set(names), registrations: [])
        } catch {
            throw EngineFailure("reading the groups failed: \(error); nothing was imported")
        }
        let day = PlatformDeprecations.dayText(world.now())
        var draft = ImportDraft(header: [
            "Imported by `fcmctl import group` on \(day): each group exists in FCM; members from your records "
                + "(FCM cannot list them). fcmctl records these groups as its own."
        ])
        for name in Set(names).sorted() {
            guard let live = observed.groups[name] else { throw EngineFailure("group \(name) does not exist in FCM; nothing was imported") }
            let exported = live.membersFromFCM ? live.members : nil
            if let local = desired.localGroups[name] {
                throw EngineFailure(
                    "group/\(name) is declared `mode: local`\(Self.at(local.location)): fcmctl keeps it itself and never records FCM's "
                        + "group of that name (`fcmctl migrate groups --apply` deletes FCM's groups once the fan-out works); nothing was imported")
            }
            if let declared = desired.groups[name] {
                if declared.members.isEmpty {
                    throw EngineFailure(
                        "group/\(name) is declared\(Self.at(declared.location)) with no members, which deletes it: declare its members first; "
                            + "nothing was imported")
                }
                if ledger.groups[name] != nil {
                    draft.notes.append("group/\(name) is fcmctl's already (recorded in the state): nothing to import.")
                    continue
                }
                if let listed, listed != declared.members {
                    throw EngineFailure(
                        "group/\(name) is declared\(Self.at(declared.location)) with other members than \(source ?? "--members") lists "
                            + "(\(Self.difference(listed, declared.members))): its declaration is what fcmctl keeps, so edit it, or import "
                            + "without --members; nothing was imported")
                }
                if let exported, exported != declared.members {
                    throw EngineFailure(
                        "group/\(name): FCM's member export lists other members than its declaration\(Self.at(declared.location)) "
                            + "(\(Self.difference(exported, declared.members))): recorded, the next plan would change the group. Make the "
                            + "declaration match, or let `apply --adopt-existing` make the group match it; nothing was imported")
                }
                draft.notes.append(
                    "group/\(name) is declared\(Self.at(declared.location)): recorded with its \(plural(declared.members.count, "declared member")); nothing to write."
                )
                draft.declaredGroups[name] = declared.members
                continue
            }
            let members: Set<Registration>
            let from: String
            if let listed {
                (members, from) = (listed, "listed in \(source ?? "--members")")
            } else if let exported {
                (members, from) = (exported, "as the member export answered")
            } else if let recorded = ledger.groups[name]?.members, !recorded.isEmpty {
                (members, from) = (recorded, "as the state records them")
            } else {
                throw EngineFailure(
                    "FCM documents no way to list the members of group \(name): declare it in a manifest with its members, "
                        + "or pass --members FILE; nothing was imported")
            }
            if exported == nil, let recorded = ledger.groups[name]?.members, recorded != members {
                throw EngineFailure(
                    "group \(name) is in the state with other members than \(from) (\(Self.difference(members, recorded))): fcmctl made it "
                        + "so, and FCM cannot tell which is true; import it without --members (the state's), or remove its record first "
                        + "(fcmctl state rm group/\(name)); nothing was imported")
            }
            draft.entries.append((.groups, Self.entry(name, "\(plural(members.count, "member")), \(from)", members, desired)))
            draft.writtenGroups[name] = members
        }
        return draft
    }

    static func at(_ location: SourceLocation?) -> String { location.map { " at \($0.file):\($0.line)" } ?? "" }

    static func topicList(_ topics: some Sequence<String>) -> String {
        let sorted = topics.sorted()
        return sorted.prefix(5).map { "topic/\($0)" }.joined(separator: ", ") + (sorted.count > 5 ? " and \(sorted.count - 5) more" : "")
    }

    /// "2 more, 1 fewer": how `listed` differs from `reference`, counted (registrations are not shown).
    static func difference(_ listed: Set<Registration>, _ reference: Set<Registration>) -> String {
        let more = listed.subtracting(reference).count
        let fewer = reference.subtracting(listed).count
        return [more > 0 ? "\(more) more" : nil, fewer > 0 ? "\(fewer) fewer" : nil].compactMap { $0 }.joined(separator: ", ")
    }

    /// A written topic or group: its members by device name where the manifests name them, sorted.
    static func entry(_ name: String, _ comment: String, _ members: some Collection<Registration>, _ desired: DesiredState) -> ManifestWriter.Entry {
        ManifestWriter.Entry(
            name: name, comment: comment,
            members: members.sorted().map { desired.deviceNames[$0].map(ManifestWriter.Member.device) ?? .registration($0) })
    }
}
