import FCMCore
import FCMManifest
import FCMReconcile
import Foundation

/// What an import is asked for: the manifests as given (what the written file must validate beside), where
/// to write, and how to hold the state.
package struct ImportRequest {
    /// The manifest paths as given with `-f`.
    package var paths: [String]
    package var loaded: LoadedManifest
    /// `-o FILE`; nil prints the YAML, and then nothing that only the YAML would declare is recorded.
    package var output: String?
    package var dryRun: Bool
    package var lock: Bool
    package var lockTimeout: Duration

    package init(paths: [String], loaded: LoadedManifest, output: String?, dryRun: Bool, lock: Bool, lockTimeout: Duration) {
        self.paths = paths
        self.loaded = loaded
        self.output = output
        self.dryRun = dryRun
        self.lock = lock
        self.lockTimeout = lockTimeout
    }
}

/// What is imported.
package enum ImportSubject {
    /// `import subscriptions`: the topic subscriptions of these registrations.
    case subscriptions([Registration])
    /// `import group`: these device groups; `listed` the members of one of them from the operator's file
    /// (`source` names it), since FCM documents no way to list them.
    case groups([String], listed: Set<Registration>?, source: String?)
}

extension ImportSubject {
    /// `import subscriptions`: the registrations listed in `file` (one per line; blank lines and `#` comments
    /// skipped), or else every device the manifests name; each once, sorted.
    package static func subscriptions(listedIn file: String?, desired: DesiredState) throws -> ImportSubject {
        var registrations: [Registration]
        if let file {
            guard let text = try? String(contentsOfFile: file, encoding: .utf8) else { throw EngineFailure("cannot read \(file)") }
            registrations = text.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }
                .filter { !$0.isEmpty && !$0.hasPrefix("#") }.map { Registration(inferring: $0) }
        } else {
            registrations = Array(desired.deviceNames.keys)
        }
        guard !registrations.isEmpty else {
            throw EngineFailure("no registrations to read: the manifest names no devices; pass --registrations FILE")
        }
        return .subscriptions(Array(Set(registrations)).sorted())
    }
}

/// How an import ended.
package struct ImportOutcome {
    /// The canonical YAML: the entries with their header, or the header alone when there was nothing to write.
    package var text: String
    /// Whether there were entries to write.
    package var hasEntries: Bool
    /// The file written (`-o`), if one was.
    package var written: String?
    /// The state written and its serial; nil when nothing was recorded.
    package var recorded: (state: String, serial: Int)?
    package var recordedSubscriptions = 0
    package var recordedGroups = 0
    /// Entries were printed (no `-o`), so none of them was recorded.
    package var printedOnly = false
}

/// The entries one import writes and the records they claim.
struct ImportDraft {
    var header: [String]
    var entries: [(section: ManifestWriter.Section, entry: ManifestWriter.Entry)] = []
    /// Subscriptions the written entries declare: recorded with the file.
    var subscriptions: [String: Set<Registration>] = [:]
    /// Groups the written entries declare: recorded with the file.
    var writtenGroups: [String: Set<Registration>] = [:]
    /// Groups the manifests declare already: recorded from their declaration, nothing written.
    var declaredGroups: [String: Set<Registration>] = [:]
    /// What was read from FCM, for the check of what the next plan would do (subscriptions only).
    var observed: ObservedState?
    /// The registrations whose subscriptions were imported.
    var subjects: Set<Registration> = []
    /// What was found but not written, said once the draft has passed its checks.
    var notes: [String] = []
}

extension Session {
    /// Before FCM is asked anything: a turned-down API is refused, and so is a state of another project
    /// (quietly: what the read has to say is said when the import reads it again under the lock).
    package func checkImport(usesIID: Bool) async throws {
        if let reason = PlatformDeprecations.refusal(usesGroups: false, usesIID: usesIID, now: world.now()) {
            throw EngineFailure(reason)
        }
        let early: StateSnapshot
        do {
            early = try await openStore().read()
        } catch {
            throw EngineFailure("\(error)")
        }
        try checkProject(early, store: openStore(), warn: false)
    }

    /// The import use case, under the state lock: reads what `subject` names from FCM, drafts entries for
    /// what the manifests do not declare yet (a declaration in another file is never redeclared: the
    /// manifest language has a name defined in one file only), proves the draft validates beside the
    /// manifests and that the next plan would remove nothing the apps made, then writes the file (`claim`)
    /// and records in the state exactly what it declares. When the state cannot record them, `release`
    /// removes the file again, so a failed import leaves neither a file that lies nor one that blocks the retry.
    package func runImport(
        _ request: ImportRequest, _ subject: ImportSubject, service: any FCMService, claim: (String) throws -> Void, release: () -> Void
    ) async throws -> ImportOutcome {
        try checkPlacement(request)
        let store = openStore()
        return try await withStateLock(store, operation: "import", lock: request.lock, timeout: request.lockTimeout) { _ in
            let snapshot = try await readState(store)
            try checkProject(snapshot, store: store)
            let desired = request.loaded.desiredState()
            let draft: ImportDraft
            switch subject {
            case .subscriptions(let registrations):
                draft = try await draftSubscriptions(
                    registrations, desired: desired, ledger: snapshot.ledger, output: request.output, service: service)
            case .groups(let names, let listed, let source):
                draft = try await draftGroups(names, listed: listed, source: source, desired: desired, ledger: snapshot.ledger, service: service)
            }
            return try await finishImport(request, draft, desired: desired, snapshot: snapshot, store: store, claim: claim, release: release)
        }
    }

    /// Formats, proves and writes the draft, and records what it claims.
    func finishImport(
        _ request: ImportRequest, _ draft: ImportDraft, desired: DesiredState, snapshot: StateSnapshot, store: any StateStore,
        claim: (String) throws -> Void, release: () -> Void
    ) async throws -> ImportOutcome {
        var writer = ManifestWriter(header: draft.header, deviceNames: Set(request.loaded.resolution.devices.names))
        for (section, entry) in draft.entries { writer.add(entry, to: section) }
        let text: String
        do {
            text = try writer.formatted(file: request.output ?? "imported.yaml")
        } catch {
            throw EngineFailure("the imported YAML could not be formatted: \(error); nothing was written or recorded")
        }
        var outcome = ImportOutcome(text: text, hasEntries: !writer.isEmpty)
        var after = desired
        if outcome.hasEntries {
            after = try validateBeside(text, request)
            // Where the draft was checked is where it will be: the locations of what it declares say so.
            for (name, topic) in after.topics where draft.subscriptions[name] != nil {
                after.topics[name]?.location = topic.location.map {
                    SourceLocation(file: request.output ?? "the printed YAML", line: $0.line, column: $0.column)
                }
            }
        }
        try Self.checkDeclared(draft, in: after)
        // Printed entries are not a manifest: without -o, only what needs no file (a group the manifests
        // declare) is recorded.
        let withFile = !outcome.hasEntries || request.output != nil
        var full = snapshot.ledger
        for (topic, members) in draft.subscriptions {
            for member in members { full.recordSubscription(member, topic: topic) }
        }
        for (name, members) in draft.writtenGroups { full.recordGroup(name, members: members) }
        for (name, members) in draft.declaredGroups { full.recordGroup(name, members: members) }
        if let observed = draft.observed {
            try checkNextPlan(before: desired, after: after, ledger: snapshot.ledger, recorded: full, observed: observed, subjects: draft.subjects)
        }
        for note in draft.notes { notices(note) }
        if request.dryRun {
            if outcome.hasEntries, let output = request.output {
                try claim(text)
                outcome.written = output
            }
            return outcome
        }
        var ledger = full
        if !withFile {
            outcome.printedOnly = true
            ledger = snapshot.ledger
            for (name, members) in draft.declaredGroups { ledger.recordGroup(name, members: members) }
        }
        if let project { ledger.bind(to: project) }
        let changed = !ledger.hasSameRecords(as: snapshot.ledger)
        if changed {
            outcome.recordedSubscriptions = withFile ? draft.subscriptions.values.reduce(0) { $0 + $1.count } : 0
            outcome.recordedGroups = (withFile ? draft.writtenGroups.count : 0) + draft.declaredGroups.count
        }
        if outcome.hasEntries, let output = request.output {
            try claim(text)
            outcome.written = output
        }
        guard changed else { return outcome }
        do {
            _ = try await commit(&ledger, to: store, replacing: snapshot.version)
        } catch {
            if outcome.written != nil { release() }
            throw EngineFailure("\(error)")
        }
        outcome.recorded = (store.displayName, ledger.serial)
        return outcome
    }

    /// Before anything is read: `-o FILE` is a new file beside the manifest that declares the project (an
    /// import file holds this project's registrations: a directory other environments read, such as a
    /// shared base, must not get them), and one the given manifests read, or the records would outlive it.
    func checkPlacement(_ request: ImportRequest) throws {
        guard let output = request.output else { return }
        let manager = FileManager.default
        if manager.fileExists(atPath: output) {
            throw EngineFailure(
                "\(output) exists; import writes a new file and never edits one: choose another -o (and merge by hand if you want one file). "
                    + "Nothing was read or recorded")
        }
        let directory = Self.directory(of: output)
        var isDirectory: ObjCBool = false
        guard manager.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw EngineFailure("cannot write \(output): \(directory) is not a directory. Nothing was read or recorded")
        }
        let identity = ManifestLoader.identity(directory)
        if let project = request.loaded.manifest.project, ManifestLoader.identity(Self.directory(of: project.location.file)) != identity {
            throw EngineFailure(
                "\(output) would not be beside \(project.location.file), the manifest that declares this environment's project: an import "
                    + "file holds this project's registrations, and \(directory) may be read by other environments (a shared base is). "
                    + "Write it into \(Self.directory(of: project.location.file)). Nothing was read or recorded")
        }
        let name = Self.fileName(of: output)
        let loadable = (name.hasSuffix(".yaml") || name.hasSuffix(".yml")) && !name.hasPrefix(".")
        let read =
            loadable
            && request.paths.contains { path in
                var isDirectory: ObjCBool = false
                return manager.fileExists(atPath: path, isDirectory: &isDirectory) && isDirectory.boolValue
                    && ManifestLoader.identity(path) == identity
            }
        if !read {
            notices.warning(
                "\(output) is not read by the manifests given (-f \(request.paths.joined(separator: " -f "))): pass it with -f on every "
                    + "plan and apply too, or they will not declare what this import records, and will remove it")
        }
    }

    /// `PathText`, not `NSString`: swift-corelibs-foundation's traps on a one-character last component.
    static func directory(of path: String) -> String {
        let directory = PathText.directory(of: path)
        return directory.isEmpty ? "." : directory
    }

    static func fileName(of path: String) -> String {
        String(path.split(separator: "/", omittingEmptySubsequences: true).last ?? Substring(path))
    }

    /// `file` as seen from `directory` (`../base/topics.yaml`): how a comment in a file written there names it.
    static func relative(_ file: String, from directory: String) -> String {
        let target = ManifestLoader.identity(file).split(separator: "/")
        let base = ManifestLoader.identity(directory).split(separator: "/")
        var common = 0
        while common < min(target.count, base.count) && target[common] == base[common] { common += 1 }
        let parts = Array(repeating: "..", count: base.count - common) + target[common...].map(String.init)
        return parts.joined(separator: "/")
    }

    /// Loads the manifests with `text` beside them, as a file of the output's name, and returns what they then
    /// declare: what import writes must validate where it is written. Refuses, naming each error, when it
    /// would not.
    func validateBeside(_ text: String, _ request: ImportRequest) throws -> DesiredState {
        let manager = FileManager.default
        let scratch = manager.temporaryDirectory.appendingPathComponent("fcmctl-import-\(getpid())-\(UInt64.random(in: 0...UInt64.max))")
        let name = request.output.map(Self.fileName) ?? "imported.yaml"
        let file = scratch.appendingPathComponent(name).path
        defer { try? manager.removeItem(at: scratch) }
        do {
            try manager.createDirectory(at: scratch, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            guard manager.createFile(atPath: file, contents: Data(text.utf8), attributes: [.posixPermissions: 0o600]) else {
                throw CocoaError(.fileWriteUnknown)
            }
        } catch {
            throw EngineFailure("cannot check the imported YAML beside the manifests (\(scratch.path): \(error)); nothing was written or recorded")
        }
        // The manifests were read inside the repository already; the scratch file beside them is fcmctl's own.
        let result = ManifestStage.load(request.paths + [file], outsidePaths: .anywhere, environment: environment)
        guard let loaded = result.loaded else {
            let shown = request.output ?? "the printed YAML"
            let errors = result.diagnostics.filter { $0.severity == .error }
            // The scratch file stands for the output: its diagnostics point at the name the user gave.
            let lines = errors.prefix(10).map { error in
                let location = error.location.map { $0.file == file ? SourceLocation(file: shown, line: $0.line, column: $0.column) : $0 }
                return "  " + Diagnostic(error.severity, error.message, at: location).headline
            }
            throw EngineFailure(
                "what import would write does not validate beside the manifests, so nothing was written or recorded:\n"
                    + lines.joined(separator: "\n") + (errors.count > 10 ? "\n  … and \(errors.count - 10) more" : ""))
        }
        return loaded.desiredState()
    }

    /// What is recorded is declared: each subscription by its topic, each group with exactly its members.
    static func checkDeclared(_ draft: ImportDraft, in desired: DesiredState) throws {
        for (topic, members) in draft.subscriptions.sorted(by: { $0.key < $1.key }) {
            guard let declared = desired.topics[topic], members.isSubset(of: declared.members) else {
                throw EngineFailure(
                    "import would record subscriptions to topic/\(topic) that the manifests would not declare (a bug); nothing was written or recorded"
                )
            }
        }
        for (name, members) in draft.writtenGroups.merging(draft.declaredGroups, uniquingKeysWith: { a, _ in a }) {
            guard desired.groups[name]?.members == members else {
                throw EngineFailure(
                    "import would record group/\(name) with other members than the manifests would declare (a bug); nothing was written or recorded")
            }
        }
    }

    /// The next plan, computed from what this import read: it must remove no subscription the apps made of a
    /// registration import read, and none that the import itself would expose. An authoritative topic
    /// removes every subscription of a known registration it does not declare, and import cannot add to a
    /// declaration in another file: then it refuses, rather than record what the next apply would undo.
    func checkNextPlan(
        before: DesiredState, after: DesiredState, ledger: Ledger, recorded: Ledger, observed: ObservedState, subjects: Set<Registration>
    ) throws {
        let already = Set(Self.appRemovals(desired: before, ledger: ledger, observed: observed).map { "\($0.topic)\n\($0.registration.value)" })
        let removals = Self.appRemovals(desired: after, ledger: recorded, observed: observed).filter {
            subjects.contains($0.registration) || !already.contains("\($0.topic)\n\($0.registration.value)")
        }
        guard !removals.isEmpty else { return }
        let redactor = Redactor(showTokens: settings.showTokens)
        var lines: [String] = []
        for topic in Set(removals.map(\.topic)).sorted() {
            let members = removals.filter { $0.topic == topic }.map { after.deviceNames[$0.registration] ?? redactor($0.registration) }.sorted()
            let declared = after.topics[topic]
            let place = declared?.location.map { " declared at \($0.file):\($0.line)" } ?? ""
            let shown = members.prefix(5).joined(separator: ", ") + (members.count > 5 ? " and \(members.count - 5) more" : "")
            lines.append("  topic/\(topic) (\(declared?.ownership.rawValue ?? "additive")\(place)): \(shown)")
        }
        throw EngineFailure(
            "the next plan would remove \(plural(removals.count, "subscription")) the apps made, so nothing was written or recorded:\n"
                + lines.joined(separator: "\n")
                + "\nAn authoritative topic removes the subscriptions of every registration fcmctl knows that it does not declare, and import "
                + "never edits a declaration. Declare them in the topic, or make it additive (fcmctl then leaves the apps' subscriptions "
                + "alone); if removing them is what you want, apply first and import again")
    }

    /// The removals a plan would make of subscriptions fcmctl did not record (the apps'), from what was read:
    /// the registrations the plan would read, the topics cut down to them (a member not read is not missing).
    static func appRemovals(desired: DesiredState, ledger: Ledger, observed: ObservedState) -> [(topic: String, registration: Registration)] {
        let scope = RefreshScope(desired: desired, ledger: ledger, mode: .all).registrations
        var seen = ObservedState(checkedGroups: [])
        for (registration, status) in observed.registrations where scope.contains(registration) { seen.registrations[registration] = status }
        var restricted = desired
        restricted.groups = [:]
        restricted.localGroups = [:]
        for (name, topic) in desired.topics { restricted.topics[name]?.members = topic.members.filter { seen.registrations[$0] != nil } }
        var kept = ledger
        kept.groups = [:]
        kept.pending.groups = []
        kept.pending.groupMembers = [:]
        let aligned = kept.aligned(with: seen, desired: restricted)
        let plan = Planner.plan(desired: restricted, ledger: aligned, observed: seen)
        var removals: [(topic: String, registration: Registration)] = []
        for change in plan.topics {
            for registration in change.removed
            where ledger.topics[change.name]?.contains(registration) != true
                && ledger.pending.subscriptions[change.name]?.contains(registration) != true
            {
                removals.append((change.name, registration))
            }
        }
        return removals
    }
}
