import ArgumentParser
import FCMCore
import FCMManifest
import FCMState
import Foundation

/// `fcmctl state …`: look at and repair fcmctl's own records without touching FCM.
struct StateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "state", abstract: "Inspect and repair fcmctl's state. Never sends anything to FCM.",
        subcommands: [
            StateListCommand.self, StateShowCommand.self, StateRemoveCommand.self, StatePullCommand.self, StatePushCommand.self,
            StateUnlockCommand.self, StateMigrateCommand.self,
        ])
}

/// Where the state is: `--state`, else the manifest's `state.path`, else `.fcmctl/state.json` beside it.
struct StateLocation: ParsableArguments {
    @OptionGroup var manifest: ManifestOptions
    @OptionGroup var state: StateOptions

    @Flag(help: "Show registrations in full instead of redacted.")
    var showTokens = false

    /// `writing`: the command writes the state, so the manifest's project is learned too (the state must be
    /// that project's, and the write records it); reading commands look at any state.
    func pipeline(writing: Bool = false) -> Pipeline {
        let pipeline = Pipeline(manifest: manifest, state: state, options: RunOptions(showTokens: showTokens))
        guard state.state == nil || writing else { return pipeline }
        // The manifest only says where the state is and whose it is; a manifest with errors still has a
        // default place, and without a manifest (only --state) the project is not known and not checked.
        let result = ManifestLoader().load(paths: manifest.paths)
        if state.state == nil, let location = result.manifest?.state?.resolvedLocation { pipeline.overrideStatePath(location) }
        if writing, let declared = result.manifest?.project {
            pipeline.project = Pipeline.project(
                of: ProjectSettings(id: declared.id?.value ?? "", senderId: declared.senderId?.value ?? ""))
        }
        return pipeline
    }
}

/// An address in the state: `group/NAME`, `topic/NAME` or `topic/NAME/REGISTRATION`.
enum StateAddress: Hashable, CustomStringConvertible {
    case group(String)
    case topic(String)
    case subscription(topic: String, registration: String)

    init(parsing text: String) throws {
        if text.hasPrefix("group/"), text.count > 6 {
            self = .group(String(text.dropFirst(6)))
            return
        }
        if text.hasPrefix("topic/") {
            let rest = text.dropFirst(6)
            if let slash = rest.firstIndex(of: "/") {
                let topic = String(rest[..<slash])
                let registration = String(rest[rest.index(after: slash)...])
                if !topic.isEmpty && !registration.isEmpty {
                    self = .subscription(topic: topic, registration: registration)
                    return
                }
            } else if !rest.isEmpty {
                self = .topic(String(rest))
                return
            }
        }
        throw ValidationError("'\(text)' is not a state address: use group/NAME, topic/NAME or topic/NAME/REGISTRATION")
    }

    var description: String {
        switch self {
        case .group(let name): "group/\(name)"
        case .topic(let name): "topic/\(name)"
        case .subscription(let topic, let registration): "topic/\(topic)/\(registration)"
        }
    }
}

private func readSnapshot(_ pipeline: Pipeline) async throws -> (any StateStore, StateSnapshot) {
    let store = try pipeline.openStore()
    let snapshot = try await pipeline.readState(store)
    if snapshot.version == nil && snapshot.ledger.isEmpty {
        throw fail("no state at \(store.displayName): nothing has been applied there yet")
    }
    return (store, snapshot)
}

struct StateListCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list", abstract: "List what fcmctl manages; with addresses, the members of those objects.")

    @OptionGroup var location: StateLocation

    @Argument(help: "group/NAME or topic/NAME to list the members of.")
    var addresses: [String] = []

    func run() async throws {
        let console = Console.current
        let (_, snapshot) = try await readSnapshot(location.pipeline())
        let ledger = snapshot.ledger
        let redactor = Redactor(showTokens: location.showTokens)
        guard !addresses.isEmpty else {
            for name in ledger.groups.keys.sorted() { console.out("group/\(name)") }
            for name in Set(ledger.topics.keys).union(ledger.pending.subscriptions.keys).sorted() { console.out("topic/\(name)") }
            for name in ledger.pending.groups.subtracting(ledger.groups.keys).sorted() { console.out("group/\(name) (pending)") }
            return
        }
        for text in addresses {
            switch try StateAddress(parsing: text) {
            case .group(let name):
                guard let group = ledger.groups[name] else { throw fail("group/\(name) is not in the state") }
                for member in group.members.sorted() { console.out("group/\(name)/\(redactor(member))") }
            case .topic(let name):
                let recorded = ledger.topics[name] ?? []
                let pending = ledger.pending.subscriptions[name] ?? []
                guard !recorded.isEmpty || !pending.isEmpty else { throw fail("topic/\(name) is not in the state") }
                for member in recorded.sorted() { console.out("topic/\(name)/\(redactor(member))") }
                for member in pending.sorted() { console.out("topic/\(name)/\(redactor(member)) (pending)") }
            case .subscription:
                throw ValidationError("list takes group/NAME or topic/NAME; use `state show` for one subscription")
            }
        }
    }
}

struct StateShowCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "show", abstract: "Show what the state records for one address.")

    @OptionGroup var location: StateLocation

    @Argument(help: "group/NAME, topic/NAME or topic/NAME/REGISTRATION.")
    var address: String

    func run() async throws {
        let console = Console.current
        let (store, snapshot) = try await readSnapshot(location.pipeline())
        let ledger = snapshot.ledger
        let redactor = Redactor(showTokens: location.showTokens)
        switch try StateAddress(parsing: address) {
        case .group(let name):
            guard let group = ledger.groups[name] else { throw fail("group/\(name) is not in the state \(store.displayName)") }
            console.out("group/\(name)")
            console.out("  members: \(group.members.count)\(group.protect ? "  (protected)" : "")")
            for member in group.members.sorted() { console.out("    \(redactor(member)) (\(member.kind.rawValue))") }
        case .topic(let name):
            let recorded = ledger.topics[name] ?? []
            let pending = ledger.pending.subscriptions[name] ?? []
            guard !recorded.isEmpty || !pending.isEmpty else { throw fail("topic/\(name) is not in the state \(store.displayName)") }
            console.out("topic/\(name)")
            console.out("  subscriptions fcmctl created: \(recorded.count)")
            for member in recorded.sorted() { console.out("    \(redactor(member)) (\(member.kind.rawValue))") }
            if !pending.isEmpty {
                console.out("  pending (may exist; the next refresh checks): \(pending.count)")
                for member in pending.sorted() { console.out("    \(redactor(member)) (\(member.kind.rawValue))") }
            }
        case .subscription(let topic, let value):
            let registration = Registration(inferring: value)
            let found = ledger.topics[topic]?.contains { $0.value == value } == true
            let pending = ledger.pending.subscriptions[topic]?.contains { $0.value == value } == true
            guard found || pending else { throw fail("topic/\(topic)/\(redactor(registration)) is not in the state \(store.displayName)") }
            console.out("topic/\(topic)/\(redactor(registration))")
            console.out(found ? "  created by fcmctl (recorded)" : "  pending: fcmctl may have created it; the next refresh checks")
        }
    }
}

struct StateRemoveCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rm",
        abstract: "Forget objects: fcmctl stops managing them. Nothing in FCM is changed.",
        discussion: "A forgotten subscription is no longer fcmctl's to remove; a forgotten group is adopted again only if declared.")

    @OptionGroup var location: StateLocation
    @OptionGroup var locking: LockOptions

    @Argument(help: "group/NAME, topic/NAME or topic/NAME/REGISTRATION (the full registration).")
    var addresses: [String]

    func run() async throws {
        let console = Console.current
        let parsed = try addresses.map(StateAddress.init(parsing:))
        let pipeline = location.pipeline(writing: true)
        let store = try pipeline.openStore()
        let redactor = Redactor(showTokens: location.showTokens)
        try await pipeline.withStateLock(store, operation: "state rm", options: locking) { _ in
            var snapshot = try await pipeline.readState(store)
            try pipeline.checkProject(snapshot, store: store)
            if let project = pipeline.project { snapshot.ledger.bind(to: project) }
            var removed = 0
            for address in parsed {
                switch address {
                case .group(let name):
                    let recorded = snapshot.ledger.groups.removeValue(forKey: name) != nil
                    let pending = snapshot.ledger.pending.groups.contains(name)
                    snapshot.ledger.pending.forgetGroup(name)
                    guard recorded || pending else { throw fail("\(address) is not in the state; nothing was removed") }
                    removed += 1
                case .topic(let name):
                    let count =
                        (snapshot.ledger.topics.removeValue(forKey: name)?.count ?? 0)
                        + (snapshot.ledger.pending.subscriptions.removeValue(forKey: name)?.count ?? 0)
                    guard count > 0 else { throw fail("\(address) is not in the state; nothing was removed") }
                    removed += count
                case .subscription(let topic, let value):
                    let matches = (snapshot.ledger.topics[topic] ?? []).union(snapshot.ledger.pending.subscriptions[topic] ?? [])
                        .filter { $0.value == value }
                    guard !matches.isEmpty else {
                        throw fail("topic/\(topic)/\(redactor(Registration(inferring: value))) is not in the state; nothing was removed")
                    }
                    for match in matches { snapshot.ledger.forgetSubscription(match, topic: topic) }
                    removed += 1
                }
            }
            do {
                snapshot.ledger.serial = try snapshot.ledger.nextSerial()
                _ = try await store.write(snapshot.ledger, replacing: snapshot.version)
            } catch {
                throw fail("\(error)")
            }
            console.out(
                "Removed \(removed) record\(removed == 1 ? "" : "s") from \(store.displayName) (serial \(snapshot.ledger.serial)). FCM was not changed."
            )
        }
    }
}

struct StatePullCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pull",
        abstract: "Print the state (with any journal folded in) as JSON on stdout.",
        discussion: "Like `terraform state pull`, this is the state itself: registrations appear in full. Keep it private.")

    @OptionGroup var location: StateLocation

    func run() async throws {
        let (_, snapshot) = try await readSnapshot(location.pipeline())
        Console.current.writeOut(String(decoding: StateFileFormat.encode(snapshot.ledger), as: UTF8.self))
    }
}

struct StatePushCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "push",
        abstract: "Replace the state with FILE: same lineage and a higher serial, or --force.")

    @OptionGroup var location: StateLocation
    @OptionGroup var locking: LockOptions

    @Flag(help: "Accept another lineage or a serial that is not higher (a deliberate roll-back).")
    var force = false

    @Argument(help: "A state file, as written by fcmctl or `state pull` (- for standard input).")
    var file: String

    func run() async throws {
        let console = Console.current
        let bytes: [UInt8]
        if file == "-" {
            bytes = Array(FileHandle.standardInput.readDataToEndOfFile())
        } else {
            guard let data = FileManager.default.contents(atPath: file) else { throw fail("\(file): cannot read it") }
            bytes = Array(data)
        }
        var pushed: Ledger
        do {
            pushed = try StateFileFormat.decode(bytes, source: file, checkingChecksum: false).ledger
        } catch {
            throw fail("\(error)")
        }
        let pipeline = location.pipeline(writing: true)
        // The manifest says which project this state serves: a state of another one is not pushed, --force or not.
        if let project = pipeline.project, let reason = pushed.project.refusal(manifest: project, state: file) {
            throw fail(reason)
        }
        let store = try pipeline.openStore()
        try await pipeline.withStateLock(store, operation: "state push", options: locking) { _ in
            do {
                let current = try await store.storedVersion()
                if !force {
                    let snapshot = try await store.read()
                    if pushed.project.conflicts(with: snapshot.ledger.project) {
                        throw StateConflictError(
                            "\(file) belongs to project \(pushed.project.description), but \(store.displayName) to "
                                + "\(snapshot.ledger.project.description); push it where that project's state is, or pass --force to replace it")
                    }
                    // A pushed state that names no project keeps the binding of the state it replaces.
                    pushed.project = snapshot.ledger.project.completed(by: pushed.project)
                    if snapshot.replayedEntries > 0 {
                        throw StateConflictError(
                            "\(store.displayName) has \(snapshot.replayedEntries) journal records of an interrupted run that the pushed state may lack; run `fcmctl apply` first to fold them in, or pass --force"
                        )
                    }
                    if let current, pushed.lineage != current.lineage {
                        throw StateConflictError(
                            "\(file) is of lineage \(pushed.lineage), but \(store.displayName) is of \(current.lineage); pass --force to replace it")
                    }
                    if let current, pushed.serial <= current.serial {
                        throw StateConflictError(
                            "\(file) has serial \(pushed.serial), not higher than the stored serial \(current.serial); pass --force to roll back")
                    }
                }
                if let project = pipeline.project { pushed.bind(to: project) }
                _ = try await store.write(pushed, replacing: current, force: force)
            } catch {
                throw fail("\(error)")
            }
            console.out("Pushed \(file) to \(store.displayName): lineage \(pushed.lineage), serial \(pushed.serial).")
        }
    }
}

struct StateUnlockCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "unlock", abstract: "Remove a state lock left by a run that is gone.",
        discussion:
            "The lock id is printed by the run that was refused (exit 4). Removing the lock of a live run lets two runs lose each other's records.")

    @OptionGroup var location: StateLocation

    @Argument(help: "The lock id.")
    var lockID: String

    func run() async throws {
        let store = try location.pipeline().openStore()
        do {
            let removed = try await store.forceUnlock(id: lockID)
            Console.current.out("Removed the state lock \(removed.id) of \(removed.describe(now: World.current.clock.wallTime())).")
        } catch {
            throw fail("\(error)")
        }
    }
}
