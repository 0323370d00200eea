import FCMClient
import FCMViews
import Foundation
import Testing

/// The emulator's wire behaviour, request by request, as the wire reference describes FCM's.
@Suite struct EmulatorWireTests {
    func groupRequest(_ emulator: any EmulatorHandle, _ body: String, sender: String = "42") async throws -> (Int, [String: Any]) {
        let response = try await emulator.send(
            .init(
                method: "POST", url: emulator.baseURL + "/fcm/notification",
                headers: [("Content-Type", "application/json"), ("project_id", sender), ("access_token_auth", "true")], body: Data(body.utf8)))
        return (response.status, (try? JSONSerialization.jsonObject(with: response.body) as? [String: Any]) ?? [:])
    }

    func getKey(_ emulator: any EmulatorHandle, _ name: String) async throws -> (Int, [String: Any]) {
        let response = try await emulator.send(
            .init(
                method: "GET", url: emulator.baseURL + "/fcm/notification?notification_key_name=\(name)",
                headers: [("project_id", "42"), ("access_token_auth", "true")]))
        return (response.status, (try? JSONSerialization.jsonObject(with: response.body) as? [String: Any]) ?? [:])
    }

    @Test func deviceGroupLifecycleAndErrorStrings() async throws {
        let emulator = try await InProcessEmulator()
        let ids = (1...20).map { "\"\(token($0))\"" }.joined(separator: ",")
        let (created, body) = try await groupRequest(emulator, #"{"operation":"create","notification_key_name":"g","registration_ids":[\#(ids)]}"#)
        #expect(created == 200)
        let key = try #require(body["notification_key"] as? String)

        #expect(
            try await groupRequest(emulator, #"{"operation":"create","notification_key_name":"g","registration_ids":["x:APA91b"]}"#).1["error"]
                as? String == "notification_key already exists")
        let full = try await groupRequest(
            emulator, #"{"operation":"add","notification_key_name":"g","notification_key":"\#(key)","registration_ids":["extra:APA91b"]}"#)
        #expect(full.0 == 400)
        #expect(full.1["error"] as? String == "maximum number of members allowed for a notification key exceeded")
        #expect(
            try await groupRequest(
                emulator, #"{"operation":"add","notification_key_name":"other","notification_key":"\#(key)","registration_ids":["x:APA91b"]}"#
            ).1["error"] as? String == "notification_key_name doesn't match the group name of the notification_key")
        #expect(
            try await groupRequest(emulator, #"{"operation":"create","notification_key_name":"h","registration_ids":["bad token"]}"#).1["error"]
                as? String == "no valid registration ids")

        // Each GET returns a different key, and every one of them works.
        let first = try #require(try await getKey(emulator, "g").1["notification_key"] as? String)
        let second = try #require(try await getKey(emulator, "g").1["notification_key"] as? String)
        #expect(first != second && first != key)
        let all = (1...20).map { "\"\(token($0))\"" }.joined(separator: ",")
        #expect(
            try await groupRequest(
                emulator, #"{"operation":"remove","notification_key_name":"g","notification_key":"\#(second)","registration_ids":[\#(all)]}"#
            ).0 == 200)

        // Emptied, the group is gone: its old keys and its name are unknown.
        #expect(try await getKey(emulator, "g").1["error"] as? String == "notification_key not found")
        #expect(
            try await groupRequest(
                emulator, #"{"operation":"add","notification_key_name":"g","notification_key":"\#(first)","registration_ids":["x:APA91b"]}"#
            ).1["error"] as? String == "notification_key not found")
    }

    @Test func createDropsInvalidRegistrations() async throws {
        let emulator = try await InProcessEmulator(arguments: ["--strict-registrations"])
        _ = try await emulator.admin("POST", "/emulator/v1/registrations", json: #"{"registrations":[{"token":"known:APA91b"}]}"#)
        #expect(
            try await groupRequest(
                emulator, #"{"operation":"create","notification_key_name":"g","registration_ids":["known:APA91b","unknown:APA91b"]}"#
            ).0 == 200)
        #expect(try await emulator.groupMembers(sender: "42", name: "g") == ["known:APA91b"])
    }

    @Test func topicSubscriptionsCreateConflictListPagesAndDelete() async throws {
        let emulator = try await InProcessEmulator()
        let base = emulator.baseURL + "/v1/projects/p/registrations/r1%3AAPA91b/topicSubscriptions"
        for index in 0..<5 {
            let name = index % 2 == 0 ? "topicName" : "topic_name"
            #expect(try await emulator.send(.init(method: "POST", url: "\(base)?\(name)=t\(index)", body: Data("{}".utf8))).status == 200)
        }
        let again = try await emulator.send(.init(method: "POST", url: "\(base)?topicName=t0", body: Data("{}".utf8)))
        #expect(again.status == 409)
        #expect(String(decoding: again.body, as: UTF8.self).contains("\"status\":\"ALREADY_EXISTS\""))

        var seen: [String] = []
        var pageToken = ""
        var pages = 0
        repeat {
            let response = try await emulator.send(.init(method: "GET", url: "\(base)?pageSize=2&pageToken=\(pageToken)"))
            let object = try #require(try JSONSerialization.jsonObject(with: response.body) as? [String: Any])
            // lowerCamelCase by default, as Google's JSON mapping of protos spells it.
            seen += (object["topicSubscriptions"] as? [[String: Any]] ?? []).compactMap { $0["topicName"] as? String }
            pageToken = object["nextPageToken"] as? String ?? ""
            pages += 1
        } while !pageToken.isEmpty
        #expect(seen == ["t0", "t1", "t2", "t3", "t4"])
        #expect(pages == 3)

        #expect(try await emulator.send(.init(method: "DELETE", url: "\(base)/t0")).status == 200)
        #expect(try await emulator.send(.init(method: "DELETE", url: "\(base)/t0")).status == 404)
        #expect(try await emulator.send(.init(method: "DELETE", url: "\(base)/t0?allow_missing=true")).status == 200)
        #expect(try await emulator.send(.init(method: "GET", url: "\(base)/t1")).status == 200)
        #expect(try await emulator.send(.init(method: "GET", url: "\(base)/t0")).status == 404)
    }

    @Test func strictModeAndUninstallGiveUnregistered() async throws {
        let emulator = try await InProcessEmulator(arguments: ["--strict-registrations"])
        let url = emulator.baseURL + "/v1/projects/p/registrations/nobody%3AAPA91b/topicSubscriptions"
        let unknown = try await emulator.send(.init(method: "GET", url: url))
        #expect(unknown.status == 404)
        #expect(String(decoding: unknown.body, as: UTF8.self).contains("\"errorCode\":\"UNREGISTERED\""))
        let malformed = try await emulator.send(.init(method: "GET", url: emulator.baseURL + "/v1/projects/p/registrations/a%20b/topicSubscriptions"))
        #expect(malformed.status == 400)
    }

    @Test func adminResetAndRequestLog() async throws {
        let emulator = try await InProcessEmulator()
        _ = try await groupRequest(emulator, #"{"operation":"create","notification_key_name":"g","registration_ids":["a:APA91b"]}"#)
        let log = try await emulator.requestLog()
        #expect(log.count == 1)
        #expect(log.first?["method"] as? String == "POST")
        #expect(log.first?["path"] as? String == "/fcm/notification")
        #expect(log.first?["status"] as? Int == 200)
        #expect(try await emulator.admin("POST", "/emulator/v1/reset").0 == 200)
        #expect(try await emulator.groupMembers(sender: "42", name: "g") == nil)
        #expect(try await emulator.requestLog().isEmpty)
    }
}

@Suite struct GroupReadErrorTests {
    @Test func exportAndGetOfUnknownGroupsAndMissingHeaders() async throws {
        let flag = [("access_token_auth", "true")]
        let plain = try await InProcessEmulator()
        let unserved = try await plain.send(
            .init(method: "GET", url: plain.baseURL + "/fcm/notification/export?notification_key=APA91bnotakey", headers: flag))
        #expect(unserved.status == 404, "the unconfirmed export is off unless asked for")
        let emulator = try await InProcessEmulator(arguments: ["--group-export"])
        let export = try await emulator.send(
            .init(method: "GET", url: emulator.baseURL + "/fcm/notification/export?notification_key=APA91bnotakey", headers: flag))
        #expect(export.status == 400)
        #expect(String(decoding: export.body, as: UTF8.self) == #"{"error":"notification_key not found"}"#)
        let noFlag = try await emulator.send(
            .init(method: "GET", url: emulator.baseURL + "/fcm/notification?notification_key_name=g", headers: [("project_id", "42")]))
        #expect(noFlag.status == 401, "OAuth callers send access_token_auth: true")
        let noSender = try await emulator.send(
            .init(method: "GET", url: emulator.baseURL + "/fcm/notification?notification_key_name=g", headers: flag))
        #expect(noSender.status == 400)
        #expect(String(decoding: noSender.body, as: UTF8.self) == #"{"error":"project_id header is required"}"#)
        let badOperation = try await emulator.send(
            .init(
                method: "POST", url: emulator.baseURL + "/fcm/notification", headers: [("project_id", "42"), ("access_token_auth", "true")],
                body: Data(#"{"operation":"rename","notification_key_name":"g","registration_ids":["a:APA91b"]}"#.utf8)))
        #expect(String(decoding: badOperation.body, as: UTF8.self) == #"{"error":"operation must be create, add or remove"}"#)
        let unnamed = try await emulator.send(
            .init(
                method: "POST", url: emulator.baseURL + "/fcm/notification", headers: [("project_id", "42"), ("access_token_auth", "true")],
                body: Data(#"{"operation":"add","notification_key":"APA91bx","registration_ids":["a:APA91b"]}"#.utf8)))
        #expect(String(decoding: unnamed.body, as: UTF8.self) == #"{"error":"notification_key_name is required"}"#)
    }
}
