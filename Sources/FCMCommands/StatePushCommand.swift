import ArgumentParser
import FCMCore
import FCMEngine
import FCMState
import FCMViews
import Foundation

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
        let session = try location.session(writing: true)
        // The manifest says which project this state serves: a state of another one is not pushed, --force or not.
        if let project = session.project, let reason = pushed.project.refusal(manifest: project, state: file) {
            throw fail(reason)
        }
        let store = session.openStore()
        try await session.withStateLock(store, operation: "state push", options: locking) { _ in
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
                if let project = session.project { pushed.bind(to: project) }
                _ = try await store.write(pushed, replacing: current, force: force)
            } catch {
                throw fail("\(error)")
            }
            console.out("Pushed \(file) to \(store.displayName): lineage \(pushed.lineage), serial \(pushed.serial).")
        }
    }
}
