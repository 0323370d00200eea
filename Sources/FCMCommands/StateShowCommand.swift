import ArgumentParser
import FCMCore
import FCMViews

struct StateShowCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "show", abstract: "Show what the state records for one address.")

    @OptionGroup var location: StateLocation

    @Argument(help: "\(Address.forms).")
    var address: String

    func run() async throws {
        let console = Console.current
        let (store, snapshot) = try await readSnapshot(try location.session())
        let ledger = snapshot.ledger
        let redactor = Redactor(showTokens: location.showTokens)
        switch try Address(parsing: address) {
        case .group(let name):
            guard let group = ledger.groups[name] else { throw fail("\(Address.group(name)) is not in the state \(store.displayName)") }
            console.out("\(Address.group(name))")
            console.out("  members: \(group.members.count)\(group.protect ? "  (protected)" : "")")
            for member in group.members.sorted() { console.out("    \(redactor(member)) (\(member.kind.rawValue))") }
        case .topic(let name):
            let recorded = ledger.topics[name] ?? []
            let pending = ledger.pending.subscriptions[name] ?? []
            guard !recorded.isEmpty || !pending.isEmpty else { throw fail("\(Address.topic(name)) is not in the state \(store.displayName)") }
            console.out("\(Address.topic(name))")
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
            guard found || pending else { throw fail("\(Address.topic(topic))/\(redactor(registration)) is not in the state \(store.displayName)") }
            console.out("\(Address.topic(topic))/\(redactor(registration))")
            console.out(found ? "  created by fcmctl (recorded)" : "  pending: fcmctl may have created it; the next refresh checks")
        }
    }
}
