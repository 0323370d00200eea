import FCMCommands
import FCMCore
import FCMEngine
import FCMState
import FCMTestSupport
import Foundation

/// A world of in-memory fakes: FCM, a state store per path, a fixed clock. Commands run in it in-process.
final class FakeWorld: @unchecked Sendable {
    let fcm: InMemoryFCMService
    private let lock = NSLock()
    private var stores: [String: InMemoryStateStore] = [:]

    init(topicBatchSize: Int = 1) { fcm = InMemoryFCMService(topicBatchSize: topicBatchSize) }

    func store(_ path: String) -> InMemoryStateStore {
        lock.withLock {
            if let store = stores[path] { return store }
            let store = InMemoryStateStore()
            stores[path] = store
            return store
        }
    }

    var world: World {
        World(
            connect: { [fcm] _, _ in Connection(service: fcm) },
            store: { [self] path, _ in self.store(path) },
            now: { Date(timeIntervalSince1970: 1_795_000_000) })
    }

    func run(_ arguments: [String], stdin: String? = nil) async -> CLIResult {
        await World.$current.withValue(world) { await CLI.run(arguments, emulator: nil, stdin: stdin) }
    }
}
