import ArgumentParser
import FCMCore
import FCMEngine
import FCMViews

/// `fcmctl state migrate --to gs://BUCKET/PREFIX`: moves the state (with any journal of an interrupted run
/// folded in) to another backend, keeping its lineage and serial, under both stores' locks. A destination
/// that already holds a different lineage is refused; one that holds this lineage at the same serial or
/// later has already been migrated.
struct StateMigrateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "migrate", abstract: "Move the state to another backend (local → gcs, or back), keeping lineage and serial.",
        discussion: """
            After migrating, point the manifest at the new place (state: {backend: gcs, bucket: B, prefix: P}) or pass \
            --state gs://B/P. The old state is left as it was; delete it once the new one is in use.
            """)

    @OptionGroup var location: StateLocation
    @OptionGroup var locking: LockOptions

    @Option(help: ArgumentHelp("Where the state goes: gs://BUCKET/PREFIX or a local path.", valueName: "location"))
    var to: String

    func run() async throws {
        let console = Console.current
        let session = try location.session(writing: true)
        let source = session.openStore()
        let destination = World.current.store(to) { console.say(.warning($0)) }
        guard source.displayName != destination.displayName else { throw fail("the state is already at \(to)") }
        try await session.withStateLock(source, operation: "state migrate", options: locking) { _ in
            try await session.withStateLock(destination, operation: "state migrate", options: locking) { _ in
                var snapshot = try await session.readState(source)
                try session.checkProject(snapshot, store: source)
                // The migrated state carries its project, completed by the manifest's.
                if let project = session.project { snapshot.ledger.bind(to: project) }
                guard snapshot.version != nil || !snapshot.ledger.isEmpty else {
                    throw fail("\(source.displayName) holds no state; there is nothing to migrate")
                }
                do {
                    let existing = try await destination.storedVersion()
                    if let existing {
                        guard existing.lineage == snapshot.ledger.lineage else {
                            throw StateConflictError(
                                "\(destination.displayName) already holds another state (lineage \(existing.lineage), serial \(existing.serial)); "
                                    + "refusing to overwrite it with lineage \(snapshot.ledger.lineage). Choose another prefix, or remove it first")
                        }
                        guard existing.serial < snapshot.ledger.serial else {
                            throw StateConflictError(
                                "\(destination.displayName) already holds lineage \(existing.lineage) at serial \(existing.serial), "
                                    + "not older than this state's \(snapshot.ledger.serial): it was migrated already")
                        }
                    }
                    // The same lineage and serial: the destination continues this history, it does not start one.
                    _ = try await destination.write(snapshot.ledger, replacing: existing, force: false)
                } catch let error as StateConflictError {
                    throw fail("\(error). Nothing was written")
                } catch {
                    throw fail("\(error)")
                }
                console.out(
                    "Migrated \(source.displayName) to \(destination.displayName): lineage \(snapshot.ledger.lineage), serial \(snapshot.ledger.serial). "
                        + "Point the manifest's state at it (or pass --state \(to)); the old state was left as it was.")
            }
        }
    }
}
