import FCMClient
import FCMCommands
import FCMCore
import FCMEngine
import FCMTestSupport
import FCMViews
import Foundation
import Testing

/// One FCMService, either the in-memory fake or the real libcurl client talking to fcm-emulator.
final class ContractBackend: @unchecked Sendable {
    let service: any FCMService
    let uninstall: (Registration) async throws -> Void
    private let close: () -> Void
    private let emulator: InProcessEmulator?

    /// `exportsMembers`: the operator's member export probe is on (the emulator serves its unconfirmed one).
    init(_ kind: String, exportsMembers: Bool = true) async throws {
        let project = ProjectSettings(id: "contract", senderId: "777")
        if kind == "memory" {
            let fake = InMemoryFCMService(exportsMembers: exportsMembers)
            service = fake
            uninstall = { fake.uninstall($0) }
            close = {}
            emulator = nil
        } else {
            let emulator = try await InProcessEmulator(arguments: exportsMembers ? ["--group-export"] : [])
            var options = ConnectOptions(
                parallelism: 8, qps: 0, endpoint: nil, verbose: false, environment: ["FCM_EMULATOR_HOST": emulator.host], needsProjectID: true)
            if exportsMembers { options.groupExportURL = "http://\(emulator.host)/fcm/notification/export" }
            let connection = try World.live.connect(project, options)
            service = connection.service
            uninstall = { registration in
                let path = "/emulator/v1/registrations/" + (registration.value.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")
                _ = try await emulator.admin("DELETE", path)
            }
            close = connection.shutdown
            self.emulator = emulator
        }
    }

    deinit { close() }
}

/// The contract every FCMService keeps, run against the fake and the real client alike: what the fake
/// promises, the emulator (and so FCM, as the wire reference describes it) does.
@Suite struct FCMServiceContractTests {
    static let backends = ["memory", "libcurl+emulator"]
    let a = Registration(value: "contract-a:APA91bxxxxxxxxxxxxxxxxxxxx1", kind: .token)
    let b = Registration(value: "contract-b:APA91bxxxxxxxxxxxxxxxxxxxx2", kind: .token)
    let c = Registration(value: "cR1rjyj4_KcAPA91bGusQ2", kind: .fid)

    @Test(arguments: backends)
    func groupLifecycleKeepsOneToTwentyMembersAndVanishesWhenEmptied(backend: String) async throws {
        let contract = try await ContractBackend(backend)
        defer { withExtendedLifetime(contract) {} }
        let fcm = contract.service
        #expect(try await fcm.groupKey(name: "fam") == nil)
        let created = try await fcm.performGroupStep(.create([a, b]), name: "fam", key: nil)
        #expect(created != nil)
        let key1 = try #require(try await fcm.groupKey(name: "fam"))
        let key2 = try #require(try await fcm.groupKey(name: "fam"))
        #expect(key1 != key2)
        #expect(try await fcm.groupMembers(name: "fam", key: key2) == [a, b])
        _ = try await fcm.performGroupStep(.add([c]), name: "fam", key: key2)
        let key3 = try #require(try await fcm.groupKey(name: "fam"))
        #expect(try await fcm.groupMembers(name: "fam", key: key3) == [a, b, c])
        await #expect { try await fcm.performGroupStep(.create([a]), name: "fam", key: nil) } throws: {
            ($0 as? FCMServiceError)?.code == "notification_key already exists"
        }
        _ = try await fcm.performGroupStep(.remove([a, b, c]), name: "fam", key: key3)
        #expect(try await fcm.groupKey(name: "fam") == nil)
    }

    /// FCM documents no member list: without the operator's probe, both say "not told", never "no members".
    @Test(arguments: backends)
    func withoutTheExportProbeMembersAreNotTold(backend: String) async throws {
        let contract = try await ContractBackend(backend, exportsMembers: false)
        defer { withExtendedLifetime(contract) {} }
        let fcm = contract.service
        _ = try await fcm.performGroupStep(.create([a, b]), name: "fam", key: nil)
        let key = try #require(try await fcm.groupKey(name: "fam"))
        #expect(try await fcm.groupMembers(name: "fam", key: key) == nil)
    }

    @Test(arguments: backends)
    func aTwentyFirstMemberIsRefused(backend: String) async throws {
        let contract = try await ContractBackend(backend)
        defer { withExtendedLifetime(contract) {} }
        let fcm = contract.service
        let twenty = (0..<20).map { Registration(value: "member\($0):APA91bxxxxxxxxxxxxxxxxxxxx", kind: .token) }
        _ = try await fcm.performGroupStep(.create(twenty), name: "big", key: nil)
        let key = try #require(try await fcm.groupKey(name: "big"))
        await #expect { try await fcm.performGroupStep(.add([a]), name: "big", key: key) } throws: {
            ($0 as? FCMServiceError)?.status == 400
        }
        #expect(try await fcm.groupMembers(name: "big", key: try #require(try await fcm.groupKey(name: "big")))?.count == 20)
    }

    @Test(arguments: backends)
    func subscriptionsAreIdempotentBothWays(backend: String) async throws {
        let contract = try await ContractBackend(backend)
        defer { withExtendedLifetime(contract) {} }
        let fcm = contract.service
        let subscribe = SubscriptionChange(topic: "news", registration: a, action: .subscribe)
        #expect(try await fcm.perform(subscribe) == .done)
        // The second create holds too, but FCM's 409 says this request did not make it: not the caller's to record.
        #expect(try await fcm.perform(subscribe) == .alreadyExists)
        #expect(try await fcm.subscriptions(of: a) == .active(topics: ["news"]))
        let batch = try await fcm.performBatch(topic: "sport", action: .subscribe, [a, b])
        #expect(batch == [a: .done, b: .done])
        #expect(try await fcm.subscriptions(of: a) == .active(topics: ["news", "sport"]))
        let unsubscribe = SubscriptionChange(topic: "news", registration: a, action: .unsubscribe)
        #expect(try await fcm.perform(unsubscribe) == .done)
        #expect(try await fcm.perform(unsubscribe) == .done)
        #expect(try await fcm.subscriptions(of: a) == .active(topics: ["sport"]))
    }

    @Test(arguments: backends)
    func anUninstalledRegistrationIsGoneNotAnError(backend: String) async throws {
        let contract = try await ContractBackend(backend)
        defer { withExtendedLifetime(contract) {} }
        let fcm = contract.service
        #expect(try await fcm.perform(SubscriptionChange(topic: "news", registration: b, action: .subscribe)) == .done)
        try await contract.uninstall(b)
        guard case .gone = try await fcm.subscriptions(of: b) else {
            Issue.record("expected gone")
            return
        }
        guard case .registrationGone = try await fcm.perform(SubscriptionChange(topic: "news", registration: b, action: .subscribe)) else {
            Issue.record("expected registrationGone")
            return
        }
        await #expect { try await fcm.performGroupStep(.create([b]), name: "solo", key: nil) } throws: {
            ($0 as? FCMServiceError)?.code == "no valid registration ids"
        }
    }
}
