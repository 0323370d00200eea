import Testing

@testable import FCMEmulator

@Suite struct NotificationKeyCodecTests {
    @Test func everyKeyIsDifferentAndDecodesToItsGroup() {
        let keys = (0..<100).map { _ in NotificationKeyCodec.encode(groupID: 7) }
        #expect(Set(keys).count == 100)
        #expect(keys.allSatisfy { $0.hasPrefix("APA91b") && NotificationKeyCodec.decode($0) == 7 })
    }

    @Test func foreignStringsDoNotDecode() {
        #expect(NotificationKeyCodec.decode("APA91bnotbase64!!") == nil)
        #expect(NotificationKeyCodec.decode("hello") == nil)
        #expect(NotificationKeyCodec.decode("") == nil)
    }
}

@Suite struct EmulatorStoreTests {
    @Test func uninstallDropsGroupMembershipAndDeletesEmptiedGroups() async {
        let store = EmulatorStore(strictRegistrations: false)
        #expect(await store.check("a:APA91b") == .valid)
        #expect(await store.check("b:APA91b") == .valid)
        let solo = EmulatorStore.GroupName(senderId: "1", name: "solo")
        let pair = EmulatorStore.GroupName(senderId: "1", name: "pair")
        _ = await store.createGroup(solo, members: ["a:APA91b"])
        _ = await store.createGroup(pair, members: ["a:APA91b", "b:APA91b"])
        #expect(await store.subscribe("a:APA91b", to: "news") == .created)
        #expect(await store.uninstall("a:APA91b"))
        #expect(await store.group(named: solo) == nil)
        #expect(await store.group(named: pair)?.members == ["b:APA91b"])
        #expect(await store.topics(of: "a:APA91b").isEmpty)
        #expect(await store.check("a:APA91b") == .notFound)
    }

    @Test func strictModeKnowsOnlyRegisteredOnes() async {
        let store = EmulatorStore(strictRegistrations: true)
        #expect(await store.check("x:APA91b") == .notFound)
        await store.register("x:APA91b", kind: "token")
        #expect(await store.check("x:APA91b") == .valid)
        #expect(await store.check("has space") == .malformed)
    }

    @Test func readsDoNotRecordFirstUse() async {
        let store = EmulatorStore(strictRegistrations: false)
        #expect(await store.check("r:APA91b", recordFirstUse: false) == .valid)
        #expect(await store.registrations.isEmpty)
        #expect(await store.check("r:APA91b") == .valid)
        #expect(await store.registrations.count == 1)
    }
}
