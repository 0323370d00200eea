import FCMClient
import FCMViews
import Foundation
import Testing

/// The rest of the emulator's surface, request by request: legacy IID, v1 patch and limits,
/// messages:send validation, authentication, faults, quotas, logs and persistence.
@Suite struct EmulatorAPITests {
    func json(_ response: HTTPResponse) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: response.body) as? [String: Any]) ?? [:]
    }

    func post(_ emulator: any EmulatorHandle, _ path: String, _ body: String, headers: [(String, String)] = []) async throws -> HTTPResponse {
        try await emulator.send(
            .init(
                method: "POST", url: emulator.baseURL + path,
                headers: [("Content-Type", "application/json"), ("access_token_auth", "true")] + headers,
                body: Data(body.utf8)))
    }

    func get(_ emulator: any EmulatorHandle, _ path: String) async throws -> HTTPResponse {
        try await emulator.send(.init(method: "GET", url: emulator.baseURL + path, headers: [("access_token_auth", "true")]))
    }

    // MARK: Legacy IID

    @Test func iidBatchResultsInInputOrderAndErrors() async throws {
        let emulator = try await InProcessEmulator(arguments: ["--strict-registrations"])
        _ = try await emulator.admin(
            "POST", "/emulator/v1/registrations",
            json: #"{"registrations":[{"token":"a:APA91b","platform":"IOS","app":"com.acme"},{"token":"c:APA91b"}]}"#)
        let added = try await post(
            emulator, "/iid/v1:batchAdd", #"{"to":"/topics/news","registration_tokens":["a:APA91b","b:APA91b","bad token","c:APA91b"]}"#)
        #expect(added.status == 200)
        let results = json(added)["results"] as? [[String: String]]
        #expect(results == [[:], ["error": "NOT_FOUND"], ["error": "INVALID_ARGUMENT"], [:]])

        let info = json(try await get(emulator, "/iid/info/a:APA91b?details=true"))
        #expect(info["application"] as? String == "com.acme")
        #expect(info["platform"] as? String == "IOS")
        #expect(((info["rel"] as? [String: Any])?["topics"] as? [String: Any])?.keys.sorted() == ["news"])
        _ = try await post(emulator, "/iid/v1:batchRemove", #"{"to":"news","registration_tokens":["a:APA91b"]}"#)
        #expect(json(try await get(emulator, "/iid/info/a:APA91b?details=true"))["rel"] == nil, "rel is omitted without topics")
        let unknown = try await get(emulator, "/iid/info/nobody:APA91b")
        #expect(unknown.status == 404)
        #expect(json(unknown)["error"] as? String == "No information found about this instance id.")
        #expect(json(try await get(emulator, "/iid/info/bad%20token"))["error"] as? String == "InvalidToken")
    }

    @Test func iidBatchRequestErrors() async throws {
        let emulator = try await InProcessEmulator()
        let many = (0...1000).map { "\"t\($0):APA91b\"" }.joined(separator: ",")
        let tooMany = try await post(emulator, "/iid/v1:batchAdd", #"{"to":"/topics/news","registration_tokens":[\#(many)]}"#)
        #expect(tooMany.status == 400)
        #expect((json(tooMany)["error"] as? String)?.hasPrefix("Too many registration tokens") == true)
        #expect(
            json(try await post(emulator, "/iid/v1:batchAdd", #"{"to":"/topics/news","registration_tokens":[]}"#))["error"] as? String
                == "MissingIIdToken")
        #expect(
            json(try await post(emulator, "/iid/v1:batchAdd", #"{"to":"/topics/bad name","registration_tokens":["a:APA91b"]}"#))["error"] as? String
                == "Topic name format is invalid")
        #expect(try await post(emulator, "/iid/v1/a:APA91b/rel/topics/solo", "{}").status == 200)
        #expect(try await emulator.topics(of: "a:APA91b") == ["solo"])
    }

    @Test func twoThousandTopicsPerRegistrationOnBothAPIs() async throws {
        let emulator = try await InProcessEmulator(arguments: ["--subscription-qps", "0"])
        for index in 0..<2000 {
            let response = try await post(emulator, "/v1/projects/p/registrations/full:APA91b/topicSubscriptions?topicName=t\(index)", "{}")
            #expect(response.status == 200)
        }
        let v1 = try await post(emulator, "/v1/projects/p/registrations/full:APA91b/topicSubscriptions?topicName=one-more", "{}")
        #expect(v1.status == 400)
        let iid = json(try await post(emulator, "/iid/v1:batchAdd", #"{"to":"/topics/one-more","registration_tokens":["full:APA91b"]}"#))
        #expect(iid["results"] as? [[String: String]] == [["error": "TOO_MANY_TOPICS"]])
    }

    @Test func patchIsAnUpsertOnlyWithAllowMissing() async throws {
        let emulator = try await InProcessEmulator()
        let url = emulator.baseURL + "/v1/projects/p/registrations/r%3AAPA91b/topicSubscriptions/news"
        #expect(try await emulator.send(.init(method: "PATCH", url: url, body: Data("{}".utf8))).status == 404)
        let created = try await emulator.send(.init(method: "PATCH", url: url + "?allowMissing=true", body: Data("{}".utf8)))
        #expect(created.status == 200)
        #expect(json(created)["topicName"] as? String == "news")
        #expect(try await emulator.send(.init(method: "PATCH", url: url, body: Data("{}".utf8))).status == 200)
    }

    @Test func snakeCaseFieldsBringBackTheSpellingOfFirebasesPages() async throws {
        let emulator = try await InProcessEmulator(arguments: ["--snake-case-fields"])
        let base = emulator.baseURL + "/v1/projects/p/registrations/r%3AAPA91b/topicSubscriptions"
        let created = try await emulator.send(.init(method: "POST", url: base + "?topicName=news", body: Data("{}".utf8)))
        #expect(json(created)["topic_name"] as? String == "news" && json(created)["create_time"] is String)
        #expect(json(created)["topicName"] == nil)
        let list = json(try await emulator.send(.init(method: "GET", url: base)))
        #expect((list["topic_subscriptions"] as? [[String: Any]])?.first?["topic_name"] as? String == "news")
    }

    // MARK: messages:send

    @Test(arguments: [
        (#"{"message":{"data":{"a":"b"}}}"#, "Exactly one of token, fid, topic or condition"),
        (#"{"message":{"topic":"a","token":"b:APA91b"}}"#, "oneof field 'target' is already set. Cannot set 'token'"),
        (#"{"message":{"topic":"/topics/news"}}"#, "prefix should not be provided"),
        (#"{"message":{"condition":"'a' in topics && "}}"#, "Invalid condition"),
        (#"{"message":{"topic":"news","data":{"google.x":"1"}}}"#, "Invalid data key 'google.x'"),
        (#"{"message":{"topic":"news","data":{"n":1}}}"#, "TYPE_STRING"),
        (#"{"message":{"topic":"news","notification":{"image":"not a url"}}}"#, "Invalid image URL"),
        (#"{"message":{"topic":"news","android":{"ttl":"99999999s"}}}"#, "Invalid android.ttl"),
        (#"{"message":{"token":"has space"}}"#, "not a valid FCM registration token"),
    ])
    func sendRefusesInvalidMessages(body: String, message: String) async throws {
        let emulator = try await InProcessEmulator()
        let response = try await post(emulator, "/v1/projects/p/messages:send", body)
        #expect(response.status == 400)
        let error = json(response)["error"] as? [String: Any]
        #expect((error?["message"] as? String)?.contains(message) == true, "\(error ?? [:])")
        #expect(error?["status"] as? String == "INVALID_ARGUMENT")
    }

    @Test func payloadLimitsDependOnTheTarget() async throws {
        let emulator = try await InProcessEmulator()
        let value = String(repeating: "x", count: 3000)
        #expect(try await post(emulator, "/v1/projects/p/messages:send", #"{"message":{"topic":"news","data":{"k":"\#(value)"}}}"#).status == 400)
        #expect(try await post(emulator, "/v1/projects/p/messages:send", #"{"message":{"token":"a:APA91b","data":{"k":"\#(value)"}}}"#).status == 200)
        let big = String(repeating: "x", count: 4100)
        #expect(try await post(emulator, "/v1/projects/p/messages:send", #"{"message":{"token":"a:APA91b","data":{"k":"\#(big)"}}}"#).status == 400)
    }

    @Test func sendingToAGroupKeyReachesItsMembers() async throws {
        let emulator = try await InProcessEmulator()
        let created = json(
            try await post(
                emulator, "/fcm/notification", #"{"operation":"create","notification_key_name":"fam","registration_ids":["m1:APA91b","m2:APA91b"]}"#,
                headers: [("project_id", "42")]))
        let key = try #require(created["notification_key"] as? String)
        #expect(
            try await post(emulator, "/v1/projects/p/messages:send", #"{"message":{"token":"\#(key)","notification":{"title":"hi"}}}"#).status == 200)
        for member in ["m1:APA91b", "m2:APA91b"] {
            let inbox = try await emulator.admin("GET", "/emulator/v1/registrations/\(member)/inbox").1["messages"] as? [[String: Any]]
            #expect(inbox?.count == 1)
        }
    }

    // MARK: Authentication

    @Test func bearerIsRequiredAndHTMLCanBeChosen() async throws {
        let emulator = try await InProcessEmulator()
        let url = emulator.baseURL + "/v1/projects/p/registrations/a%3AAPA91b/topicSubscriptions"
        let bare = try await emulator.transport.send(.init(method: "GET", url: url))
        #expect(bare.status == 401)
        #expect((json(bare)["error"] as? [String: Any])?["status"] as? String == "UNAUTHENTICATED")
        let wrong = try await emulator.transport.send(.init(method: "GET", url: url, headers: [("Authorization", "Bearer nope")]))
        #expect(wrong.status == 401)

        let html = try await InProcessEmulator(arguments: ["--html-unauthorized"])
        let page = try await html.transport.send(.init(method: "GET", url: html.baseURL + "/fcm/notification?notification_key_name=x"))
        #expect(page.status == 401)
        #expect(String(decoding: page.body, as: UTF8.self).contains("<H2>Error 401</H2>"))

        let open = try await InProcessEmulator(arguments: ["--no-auth", "--accept-token", "ci-token"])
        #expect(
            try await open.transport.send(.init(method: "GET", url: open.baseURL + "/v1/projects/p/registrations/a%3AAPA91b/topicSubscriptions"))
                .status == 200)
    }

    // MARK: IAM

    /// Over real sockets: a service account signs in with its key (a real JWT-bearer grant) and may act on its
    /// own project only; a viewer reads and is refused writes; a sender no project claims is refused; `owner`
    /// may do anything; the admin API lists who holds what.
    @Test func iamChecksEveryRequestsPrincipal() async throws {
        let workspace = try Workspace()
        let key = workspace.url.appendingPathComponent("sa.json").path
        let emulator = try await InProcessEmulator(arguments: [
            "--strict-registrations", "--project-id", "acme-dev", "--service-account-out", key,
            "--accept-token", "planner-token=planner@acme-ci.iam.gserviceaccount.com",
            "--iam", "planner@acme-ci.iam.gserviceaccount.com=roles/firebasecloudmessaging.viewer@acme-dev",
        ])
        for (project, sender, token) in [("acme-dev", "111", "dev-1:APA91b"), ("acme-prod", "222", "prod-1:APA91b")] {
            _ = try await emulator.admin(
                "POST", "/emulator/v1/registrations",
                json: #"{"project":"\#(project)","sender_id":"\#(sender)","registrations":[{"token":"\#(token)"}]}"#)
        }
        let assertion = try ServiceAccountKey(path: key).assertion(now: Date())
        let grant = try await emulator.transport.send(
            .init(
                method: "POST", url: emulator.baseURL + "/token", headers: [("Content-Type", "application/x-www-form-urlencoded")],
                body: Data("grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion=\(assertion)".utf8)))
        let deployer = try #require(json(grant)["access_token"] as? String, "\(String(decoding: grant.body, as: UTF8.self))")

        func call(_ method: String, _ path: String, _ body: String? = nil, token: String, sender: String? = nil) async throws -> HTTPResponse {
            var headers = [("Authorization", "Bearer \(token)"), ("access_token_auth", "true"), ("Content-Type", "application/json")]
            if let sender { headers.append(("project_id", sender)) }
            return try await emulator.transport.send(
                .init(method: method, url: emulator.baseURL + path, headers: headers, body: body.map { Data($0.utf8) }))
        }
        func denied(_ response: HTTPResponse) -> String? {
            let error = json(response)["error"] as? [String: Any]
            let info = (error?["details"] as? [[String: Any]])?.first
            guard response.status == 403, info?["reason"] as? String == "IAM_PERMISSION_DENIED" else { return nil }
            return (info?["metadata"] as? [String: String])?["permission"]
        }
        let devTopics = "/v1/projects/acme-dev/registrations/dev-1%3AAPA91b/topicSubscriptions"
        let prodTopics = "/v1/projects/acme-prod/registrations/prod-1%3AAPA91b/topicSubscriptions"

        // The key's account, fcmctl-test@acme-dev: admin of its own project, nothing elsewhere.
        #expect(try await call("POST", devTopics + "?topicName=news", "{}", token: deployer).status == 200)
        #expect(denied(try await call("POST", prodTopics + "?topicName=news", "{}", token: deployer)) == "cloudmessaging.topicSubscriptions.create")
        #expect(denied(try await call("GET", prodTopics, token: deployer)) == "cloudmessaging.topicSubscriptions.list")
        let group = #"{"operation":"create","notification_key_name":"family","registration_ids":["dev-1:APA91b"]}"#
        let typo = try await call("POST", "/fcm/notification", group, token: deployer, sender: "1111")
        #expect(typo.status == 403)
        #expect(
            json(typo)["error"] as? String
                == "Permission 'cloudmessaging.topicSubscriptions.create' denied on resource '//cloudresourcemanager.googleapis.com/projects/1111' (or it may not exist)."
        )
        #expect(try await call("POST", "/fcm/notification", group, token: deployer, sender: "222").status == 403, "prod's sender")
        #expect(try await call("POST", "/fcm/notification", group, token: deployer, sender: "111").status == 200)

        // The viewer reads, and is refused every write with the permission named.
        #expect(try await call("GET", devTopics, token: "planner-token").status == 200)
        #expect(try await call("GET", "/fcm/notification?notification_key_name=family", token: "planner-token", sender: "111").status == 200)
        #expect(denied(try await call("DELETE", devTopics + "/news", token: "planner-token")) == "cloudmessaging.topicSubscriptions.delete")
        let send = #"{"message":{"topic":"news","data":{"a":"b"}}}"#
        #expect(
            denied(try await call("POST", "/v1/projects/acme-dev/messages:send", send, token: "planner-token")) == "cloudmessaging.messages.create")
        #expect(try await emulator.topics(of: "dev-1:APA91b") == ["news"], "nothing a refusal touched changed")

        // owner is not a principal: nothing is checked.
        #expect(try await call("POST", prodTopics + "?topicName=news", "{}", token: "owner").status == 200)

        let log = try await emulator.requestLog()
        #expect(
            log.contains { $0["status"] as? Int == 403 && $0["principal"] as? String == "serviceAccount:planner@acme-ci.iam.gserviceaccount.com" })
        let (status, listing) = try await emulator.admin("GET", "/emulator/v1/principals")
        #expect(status == 200)
        let rows = listing["principals"] as? [[String: Any]] ?? []
        let account = rows.first { $0["member"] as? String == "serviceAccount:fcmctl-test@acme-dev.iam.gserviceaccount.com" }
        #expect(account?["tokens_issued"] as? Int == 1)
        #expect(
            account?["roles"] as? [[String: String]] == [["project": "acme-dev", "role": "roles/firebasecloudmessaging.admin", "from": "default"]])
        let planner = rows.first { $0["member"] as? String == "serviceAccount:planner@acme-ci.iam.gserviceaccount.com" }
        #expect(
            planner?["roles"] as? [[String: String]] == [
                ["project": "acme-ci", "role": "roles/firebasecloudmessaging.admin", "from": "default"],
                ["project": "acme-dev", "role": "roles/firebasecloudmessaging.viewer", "from": "--iam"],
            ])
        _ = workspace
    }

    // MARK: Faults and quotas

    @Test func injectedErrorsTakeEachAPIFamilysShape() async throws {
        let emulator = try await InProcessEmulator(arguments: ["--error-rate", "503=1", "--retry-after", "7"])
        let v1 = try await get(emulator, "/v1/projects/p/registrations/a%3AAPA91b/topicSubscriptions")
        #expect(v1.status == 503)
        #expect(v1.headers["retry-after"] == "7")
        #expect((json(v1)["error"] as? [String: Any])?["status"] as? String == "UNAVAILABLE")
        let iid = try await post(emulator, "/iid/v1:batchAdd", #"{"to":"news","registration_tokens":["a:APA91b"]}"#)
        #expect(json(iid)["error"] as? String == "UNAVAILABLE")

        // Replaced at run time: a per-endpoint rate, HTML bodies.
        let (status, _) = try await emulator.admin(
            "PUT", "/emulator/v1/faults", json: #"{"error_rates":[{"endpoint":"topics.create","status":500,"rate":1}],"html_errors":true}"#)
        #expect(status == 200)
        #expect(try await get(emulator, "/v1/projects/p/registrations/a%3AAPA91b/topicSubscriptions").status == 200)
        let html = try await post(emulator, "/v1/projects/p/registrations/a%3AAPA91b/topicSubscriptions?topicName=x", "{}")
        #expect(html.status == 500)
        #expect(String(decoding: html.body, as: UTF8.self).contains("<H1>Error 500</H1>"))
    }

    @Test func seededFaultsRepeatAndOtherSeedsDiffer() async throws {
        func statuses(seed: Int) async throws -> [Int] {
            let emulator = try await InProcessEmulator(arguments: ["--error-rate", "503=0.5", "--seed", String(seed)])
            var result: [Int] = []
            for _ in 0..<24 { result.append(try await get(emulator, "/v1/projects/p/registrations/a%3AAPA91b/topicSubscriptions").status) }
            return result
        }
        let first = try await statuses(seed: 42)
        #expect(Set(first) == [200, 503])
        #expect(try await statuses(seed: 42) == first)
        #expect(try await statuses(seed: 7) != first)
    }

    @Test func latencyDropsAndFailingRegistrations() async throws {
        let emulator = try await InProcessEmulator(arguments: ["--latency", "150ms", "--fail-registration", "sick:APA91b=503"])
        #expect(try await get(emulator, "/v1/projects/p/registrations/ok%3AAPA91b/topicSubscriptions").status == 200)
        // The emulator logs the latency it added; no wall-clock measurement in the test.
        let latency = try await emulator.requestLog().first?["latency_ms"] as? Double
        #expect((latency ?? 0) >= 150)
        #expect(try await get(emulator, "/v1/projects/p/registrations/sick%3AAPA91b/topicSubscriptions").status == 503)

        let dropping = try await InProcessEmulator(arguments: ["--drop-rate", "1"])
        await #expect(throws: TransportError.self) {
            _ = try await self.get(dropping, "/v1/projects/p/registrations/ok%3AAPA91b/topicSubscriptions")
        }
    }

    @Test func subscriptionQuotaRefusesBeyondTheRate() async throws {
        // 0.001 changes per second: a bucket of one change, refilled after 1,000 seconds, so the second and
        // third of three requests are refused however loaded the machine is.
        let emulator = try await InProcessEmulator(arguments: ["--subscription-qps", "0.001", "--retry-after", "2"])
        var responses: [HTTPResponse] = []
        for index in 0..<3 {
            responses.append(try await post(emulator, "/v1/projects/p/registrations/q%3AAPA91b/topicSubscriptions?topicName=t\(index)", "{}"))
        }
        #expect(responses.map(\.status) == [200, 429, 429])
        #expect(responses[1].headers["retry-after"] == "2")
        let details = (json(responses[1])["error"] as? [String: Any])?["details"] as? [[String: Any]]
        #expect(details?.first?["errorCode"] as? String == "QUOTA_EXCEEDED")
        // A batch of two costs two changes, more than the whole bucket: refused at once, in IID's flat shape.
        let iid = try await post(emulator, "/iid/v1:batchAdd", #"{"to":"news","registration_tokens":["a:APA91b","b:APA91b"]}"#)
        #expect(iid.status == 429)
        #expect(json(iid)["error"] as? String == "RESOURCE_EXHAUSTED")
    }

    // MARK: Observability and persistence

    @Test func requestLogRedactsAndStatsCount() async throws {
        let logFile = FileManager.default.temporaryDirectory.appendingPathComponent("emulator-\(UUID().uuidString).jsonl").path
        defer { try? FileManager.default.removeItem(atPath: logFile) }
        let emulator = try await InProcessEmulator(arguments: ["--request-log", logFile])
        let token = "fGw0qy4TGgk:APA91bHun4MxP5egoKMwt2KZFBaFUH"
        let encoded = token.replacingOccurrences(of: ":", with: "%3A")
        _ = try await post(emulator, "/v1/projects/p/registrations/\(encoded)/topicSubscriptions?topicName=a", "{}")
        _ = try await post(emulator, "/v1/projects/p/registrations/\(encoded)/topicSubscriptions?topicName=a", "{}")
        let log = try await emulator.requestLog()
        #expect(log.map { $0["path"] as? String } == Array(repeating: "/v1/projects/p/registrations/fGw0qy…aFUH/topicSubscriptions", count: 2))
        #expect(log.allSatisfy { !($0["path"] as? String ?? "").contains("APA91bHun") })
        #expect(log.map { $0["status"] as? Int } == [200, 409])
        #expect(log.allSatisfy { ($0["bytes_in"] as? Int) == 2 && ($0["latency_ms"] as? Double ?? -1) >= 0 })
        let lines = try String(contentsOfFile: logFile, encoding: .utf8).split(separator: "\n")
        #expect(lines.count == 2)
        #expect(!lines.joined().contains("APA91bHun"))
        let stats = try await emulator.admin("GET", "/emulator/v1/stats").1
        let create = (stats["endpoints"] as? [String: Any])?["topics.create"] as? [String: Any]
        #expect(create?["requests"] as? Int == 2)
        #expect((create?["by_status"] as? [String: Int]) == ["200": 1, "409": 1])
        #expect(stats["subscriptions"] as? Int == 1)
    }

    @Test func stateFileSurvivesARestart() async throws {
        let stateFile = FileManager.default.temporaryDirectory.appendingPathComponent("emulator-state-\(UUID().uuidString).json").path
        defer { try? FileManager.default.removeItem(atPath: stateFile) }
        do {
            let first = try EmulatorProcess(arguments: ["--state-file", stateFile])
            _ = try await post(first, "/v1/projects/p/registrations/keep%3AAPA91b/topicSubscriptions?topicName=kept", "{}")
            _ = try await post(
                first, "/fcm/notification", #"{"operation":"create","notification_key_name":"g","registration_ids":["keep:APA91b"]}"#,
                headers: [("project_id", "42")])
            first.stop()
        }
        let second = try EmulatorProcess(arguments: ["--state-file", stateFile])
        #expect(try await second.topics(of: "keep:APA91b") == ["kept"])
        #expect(try await second.groupMembers(sender: "42", name: "g") == ["keep:APA91b"])
    }
}
