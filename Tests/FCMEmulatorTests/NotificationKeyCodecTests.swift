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
    let any = EmulatorStore.Caller.sender("unlinked")

    @Test func uninstallDropsGroupMembershipAndDeletesEmptiedGroups() async {
        let store = EmulatorStore(autoRegister: true)
        #expect(await store.check("a:APA91b", as: any) == .valid)
        #expect(await store.check("b:APA91b", as: any) == .valid)
        let solo = EmulatorStore.GroupName(senderId: "1", name: "solo")
        let pair = EmulatorStore.GroupName(senderId: "1", name: "pair")
        _ = await store.createGroup(solo, members: ["a:APA91b"])
        _ = await store.createGroup(pair, members: ["a:APA91b", "b:APA91b"])
        #expect(await store.subscribe("a:APA91b", to: "news") == .created)
        #expect(await store.uninstall("a:APA91b"))
        #expect(await store.group(named: solo) == nil)
        #expect(await store.group(named: pair)?.members == ["b:APA91b"])
        #expect(await store.topics(of: "a:APA91b").isEmpty)
        #expect(await store.check("a:APA91b", as: any) == .notFound)
    }

    @Test func strictModeKnowsOnlyRegisteredOnes() async {
        let store = EmulatorStore(autoRegister: false)
        #expect(await store.check("x:APA91b", as: any) == .notFound)
        await store.register("x:APA91b", kind: "token", project: nil)
        #expect(await store.check("x:APA91b", as: any) == .valid)
        #expect(await store.check("has space", as: any) == .malformed)
    }

    @Test func registrationsBelongToTheirProject() async {
        let store = EmulatorStore(autoRegister: false)
        await store.register("a:APA91b", kind: "token", project: "alpha")
        await store.link(sender: "111", to: "alpha")
        await store.link(sender: "222", to: "beta")
        #expect(await store.check("a:APA91b", as: .project("alpha")) == .valid)
        #expect(await store.check("a:APA91b", as: .sender("111")) == .valid)
        #expect(await store.check("a:APA91b", as: .project("beta")) == .otherProject)
        #expect(await store.check("a:APA91b", as: .sender("222")) == .otherProject)
        #expect(await store.subscribe("a:APA91b", to: "news") == .created)
        #expect(await store.registrations(of: .project("beta")) { $0.contains("news") }.isEmpty)
        #expect(await store.registrations(of: .project("alpha")) { $0.contains("news") } == ["a:APA91b"])
    }

    @Test func autoRegisterPinsTheProjectOfFirstUse() async {
        let store = EmulatorStore(autoRegister: true)
        #expect(await store.check("p:APA91b", as: .project("alpha")) == .valid)
        #expect(await store.check("p:APA91b", as: .project("beta")) == .otherProject)
    }

    @Test func readsDoNotRecordFirstUse() async {
        let store = EmulatorStore(autoRegister: true)
        #expect(await store.check("r:APA91b", as: any, recordFirstUse: false) == .valid)
        #expect(await store.registrations.isEmpty)
        #expect(await store.check("r:APA91b", as: any) == .valid)
        #expect(await store.registrations.count == 1)
    }
}
