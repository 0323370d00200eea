import ArgumentParser
import FCMCore
import FCMEngine
import FCMViews

struct StateRemoveCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rm",
        abstract: "Forget objects: fcmctl stops managing them. Nothing in FCM is changed.",
        discussion: "A forgotten subscription is no longer fcmctl's to remove; a forgotten group is adopted again only if declared.")

    @OptionGroup var location: StateLocation
    @OptionGroup var locking: LockOptions

    @Argument(help: "\(Address.forms) (the full registration).")
    var addresses: [String]

    func run() async throws {
        let console = Console.current
        let parsed = try addresses.map(Address.init(parsing:))
        let session = try location.session(writing: true)
        let store = session.openStore()
        let redactor = Redactor(showTokens: location.showTokens)
        try await session.withStateLock(store, operation: "state rm", options: locking) { _ in
            var snapshot = try await session.readState(store)
            try session.checkProject(snapshot, store: store)
            if let project = session.project { snapshot.ledger.bind(to: project) }
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
                        throw fail("\(Address.topic(topic))/\(redactor(Registration(inferring: value))) is not in the state; nothing was removed")
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
