import Foundation
import Testing

@testable import FCMEmulator

@Suite struct StateExportTests {
    func filledStore() async -> EmulatorStore {
        let store = EmulatorStore(autoRegister: false)
        await store.link(sender: "42", to: "acme")
        await store.register("a:APA91b", kind: "token", project: "acme", platform: "IOS", app: "com.acme")
        await store.register("b:APA91b", kind: "token", project: "acme")
        _ = await store.subscribe("a:APA91b", to: "news")
        _ = await store.deliver(
            name: "projects/acme/messages/1", message: #"{"android":{"notification":{"notification_count":1}}}"#, to: ["a:APA91b"])
        _ = await store.createGroup(.init(senderId: "42", name: "family"), members: ["a:APA91b", "b:APA91b"])
        return store
    }

    @Test func anExportReadBackWritesTheSameBytes() async throws {
        let snapshot = await filledStore().snapshot()
        let clock = StateExport.Clock(now: Timestamp.parse("2027-09-30T00:00:00Z"), newProject: true)
        let first = StateExport.document(snapshot, clock: clock, exportedBy: "test")
        let contents = try StateExport.read(first)
        #expect(contents.clock == clock)
        let second = StateExport.document(contents.snapshot, clock: contents.clock!, exportedBy: "test")
        #expect(second == first)
        // A number in a delivered message stays a number (NSNumber would bridge a 1 to true on Linux).
        #expect(String(decoding: first, as: UTF8.self).contains(#""notification_count":1"#))
    }

    @Test func restoredGroupsKeepTheirIDsSoOldKeysStillWork() async throws {
        let store = await filledStore()
        let key = NotificationKeyCodec.encode(groupID: 1)
        let contents = try StateExport.read(StateExport.document(await store.snapshot(), clock: .init(), exportedBy: "test"))
        let fresh = EmulatorStore(autoRegister: false)
        await fresh.restore(contents.snapshot, replacingSenders: true)
        #expect(await fresh.group(id: NotificationKeyCodec.decode(key)!)?.0.name == "family")
        #expect(await fresh.counts.subscriptions == 1)
        #expect(await fresh.projectID(of: .sender("42")) == "acme")
    }

    @Test(arguments: [
        (#"{"format": "fcm-emulator-export", "version": 3}"#, "newer fcm-emulator (format version 3)"),
        (#"{"groups": [], "registrations": [{"id": "a", "inbox_count": 0}]}"#, "GET /emulator/v1/state"),
        (#"{"hello": 1}"#, "not an fcm-emulator export"),
        (#"[1]"#, "not JSON with an object"),
        (#"{"format": "fcm-emulator-export", "version": 2, "registrations": [{"id": "a", "topics": {"t": "yesterday"}}]}"#, "not an RFC 3339 time"),
    ])
    func refusalsSayWhy(text: String, reason: String) {
        #expect {
            _ = try StateExport.read(Data(text.utf8))
        } throws: { error in
            "\(error)".contains(reason)
        }
    }

    static let head = #"{"format": "fcm-emulator-export", "version": 2, "#
    static let member = #""registrations": [{"id": "a:APA91b"}, {"id": "b:APA91b", "uninstalled": true}], "#

    /// What crashed the emulator (SIGILL) or slipped in before each field was checked: refused, naming the field.
    @Test(arguments: [
        (
            head + #""registrations": [{"id": "a:APA91b", "inbox": [{"name": "m", "received_at": "2026-01-01T00:00:00Z", "message": "x"}]}]}"#,
            "registrations[0].inbox[0].message: a string, expected an object"
        ),
        (
            head + #""registrations": [{"id": "a:APA91b", "inbox": [{"name": "m", "received_at": "2026-01-01T00:00:00Z", "message": 7}]}]}"#,
            "registrations[0].inbox[0].message: the number 7, expected an object"
        ),
        (
            head + member + #""groups": [{"sender_id": "1", "name": "g", "id": 9223372036854775807, "members": ["a:APA91b"]}]}"#,
            "groups[0].id: 9223372036854775807 is out of range"
        ),
        (head + member + #""groups": [{"sender_id": "1", "name": "g", "id": true, "members": ["a:APA91b"]}]}"#, "groups[0].id: true, expected"),
        (head + member + #""next_group_id": 9223372036854775807}"#, "next_group_id: 9223372036854775807 is out of range"),
        (head + member + #""next_group_id": 18446744073709551616}"#, "next_group_id: 18446744073709551616 is out of range"),
        (head + #""registrations": {}}"#, "registrations: an object, expected an array"),
        (head + #""groups": "none"}"#, "groups: a string, expected an array"),
        (
            head + member + #""groups": [{"sender_id": "1", "name": "g", "id": 1, "members": ["a:APA91b", "c:APA91b"]}]}"#,
            #"groups[0].members[1]: "c:APA91b" is not a registration of this export"#
        ),
        (
            head + member + #""groups": [{"sender_id": "1", "name": "g", "id": 1, "members": ["b:APA91b"]}]}"#,
            #"groups[0].members[0]: "b:APA91b" is uninstalled"#
        ),
        (
            head + #""registrations": [{"id": "a:APA91b", "topics": {"<b>x</b>": "2026-01-01T00:00:00Z"}}]}"#,
            #"registrations[0].topics."<b>x</b>": not a topic name"#
        ),
        (head + #""registrations": [{"id": "a:APA91b", "topic": {}}]}"#, #"registrations[0]."topic": not a field of the export format"#),
        (head + #""clock": {"now": 5}}"#, "clock.now: the number 5, expected an RFC 3339 time"),
        (#"{"format": "fcm-emulator-export", "version": "2"}"#, "version: a string, expected a format version"),
        ("[" + String(repeating: "[", count: 600) + String(repeating: "]", count: 600) + "]", "not JSON (Too many nested arrays"),
    ])
    func hostileExportsAreRefusedByField(text: String, reason: String) {
        #expect {
            _ = try StateExport.read(Data(text.utf8))
        } throws: { error in
            "\(error)".hasPrefix(reason)
        }
    }

    @Test func twentyMembersAreAGroupAndTwentyOneAreNot() throws {
        let ids = (0..<21).map { "m\($0):APA91b" }
        func document(_ members: ArraySlice<String>) -> Data {
            let registrations = ids.map { #"{"id": "\#($0)"}"# }.joined(separator: ",")
            let list = members.map { "\"\($0)\"" }.joined(separator: ",")
            return Data(
                (Self.head + #""registrations": [\#(registrations)], "groups": [{"sender_id": "1", "name": "g", "id": 1, "members": [\#(list)]}]}"#)
                    .utf8)
        }
        #expect(try StateExport.read(document(ids.prefix(20))).snapshot.groups.first?.record.members.count == 20)
        #expect {
            _ = try StateExport.read(document(ids[...]))
        } throws: { error in
            "\(error)" == "groups[0].members: 21 members, FCM allows at most 20"
        }
    }

    @Test func theLastGroupIDIsRefusedNotOverflowed() async throws {
        let text =
            Self.head + Self.member
            + #""groups": [{"sender_id": "1", "name": "g", "id": 9007199254740991, "members": ["a:APA91b"]}], "next_group_id": 9007199254740992}"#
        let store = EmulatorStore(autoRegister: false)
        await store.restore(try StateExport.read(Data(text.utf8)).snapshot, replacingSenders: true)
        #expect(await store.createGroup(.init(senderId: "1", name: "h"), members: ["a:APA91b"]) == nil)
        #expect(await store.group(id: EmulatorStore.maximumGroupID)?.0.name == "g")
    }

    @Test func timestampsReadWhatTheyWrite() {
        for text in [
            "2026-01-15T01:30:15.010Z", "2026-11-24T19:29:52.491Z", "1999-12-31T23:59:59.999Z", "9999-12-31T23:59:59.999Z",
            "0001-01-01T00:00:00.001Z",
        ] {
            #expect(Timestamp.parse(text).map(Timestamp.rfc3339) == text)
        }
        #expect(Timestamp.parse("2026-01-15T02:30:15+01:00").map(Timestamp.rfc3339) == "2026-01-15T01:30:15.000Z")
        #expect(Timestamp.parse("2026-13-01T00:00:00Z") == nil)
        #expect(Timestamp.parse("0000-01-01T00:00:00Z") == nil, "years 1 to 9999, as the text is written back")
    }
}

@Suite struct ListingTests {
    @Test func pagesVisitEveryRegistrationOnceInOrder() async {
        let store = EmulatorStore(autoRegister: false)
        let ids = (0..<25).map { "r\($0):APA91b" }
        for id in ids.shuffled() { await store.register(id, kind: "token", project: "p") }
        var seen: [String] = []
        var token: String?
        repeat {
            let page = await store.registrationPage(matching: RegistrationQuery(""), after: token, size: 10)
            seen += page.items.map(\.0)
            token = page.next
        } while token != nil
        #expect(seen == ids.sorted())
    }

    @Test func aTopicSearchFindsTheSameWithAndWithoutTheIndex() async {
        let store = EmulatorStore(autoRegister: false)
        for index in 0..<40 {
            let id = "r\(index):APA91b"
            await store.register(id, kind: "token", project: "p")
            _ = await store.subscribe(id, to: index % 10 == 0 ? "rare" : "common")
        }
        // `topic:rare` is answered from the topic index (4 of 40 subscribe), `rare` by walking every registration.
        let narrowed = await store.registrationPage(matching: RegistrationQuery("topic:rare"), after: nil, size: 100).items.map(\.0)
        let walked = await store.registrationPage(matching: RegistrationQuery("rare"), after: nil, size: 100).items.map(\.0)
        #expect(narrowed == walked && narrowed.count == 4)
    }

    @Test func searchIgnoresASCIICase() {
        #expect(SearchText("ApP").found(in: "com.acme.APPS"))
        #expect(!SearchText("apq").found(in: "com.acme.app"))
        #expect(SearchText("").found(in: ""))
    }
}
