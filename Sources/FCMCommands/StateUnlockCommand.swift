import ArgumentParser
import FCMCore
import FCMEngine
import FCMState
import FCMViews
import Foundation

struct StateUnlockCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "unlock", abstract: "Remove a state lock left by a run that is gone.",
        discussion:
            "The lock id is printed by the run that was refused (exit 4). Removing the lock of a live run lets two runs lose each other's records.")

    @OptionGroup var location: StateLocation

    @Argument(help: "The lock id.")
    var lockID: String

    func run() async throws {
        let store = try location.session().openStore()
        do {
            let removed = try await store.forceUnlock(id: lockID)
            Console.current.out("Removed the state lock \(removed.id) of \(removed.describe(now: World.current.clock.wallTime())).")
        } catch {
            throw fail("\(error)")
        }
    }
}
