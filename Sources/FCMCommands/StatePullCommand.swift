import ArgumentParser
import FCMCore
import FCMState
import FCMViews

struct StatePullCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pull",
        abstract: "Print the state (with any journal folded in) as JSON on stdout.",
        discussion: "Like `terraform state pull`, this is the state itself: registrations appear in full. Keep it private.")

    @OptionGroup var location: StateLocation

    func run() async throws {
        let (_, snapshot) = try await readSnapshot(try location.session())
        Console.current.writeOut(String(decoding: StateFileFormat.encode(snapshot.ledger), as: UTF8.self))
    }
}
