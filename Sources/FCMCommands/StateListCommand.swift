import ArgumentParser
import FCMCore
import FCMViews

struct StateListCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list", abstract: "List what fcmctl manages; with addresses, the members of those objects.")

    @OptionGroup var location: StateLocation

    @Argument(help: "\(Address.group("NAME")) or \(Address.topic("NAME")) to list the members of.")
    var addresses: [String] = []

    func run() async throws {
        let console = Console.current
        let (_, snapshot) = try await readSnapshot(try location.session())
        let ledger = snapshot.ledger
        let redactor = Redactor(showTokens: location.showTokens)
        guard !addresses.isEmpty else {
            for name in ledger.groups.keys.sorted() { console.out("\(Address.group(name))") }
            for name in Set(ledger.topics.keys).union(ledger.pending.subscriptions.keys).sorted() { console.out("\(Address.topic(name))") }
            for name in ledger.pending.groups.subtracting(ledger.groups.keys).sorted() { console.out("\(Address.group(name)) (pending)") }
            return
        }
        for text in addresses {
            switch try Address(parsing: text) {
            case .group(let name):
                guard let group = ledger.groups[name] else { throw fail("\(Address.group(name)) is not in the state") }
                for member in group.members.sorted() { console.out("\(Address.group(name))/\(redactor(member))") }
            case .topic(let name):
                let recorded = ledger.topics[name] ?? []
                let pending = ledger.pending.subscriptions[name] ?? []
                guard !recorded.isEmpty || !pending.isEmpty else { throw fail("\(Address.topic(name)) is not in the state") }
                for member in recorded.sorted() { console.out("\(Address.topic(name))/\(redactor(member))") }
                for member in pending.sorted() { console.out("\(Address.topic(name))/\(redactor(member)) (pending)") }
            case .subscription:
                throw ValidationError("list takes \(Address.group("NAME")) or \(Address.topic("NAME")); use `state show` for one subscription")
            }
        }
    }
}
