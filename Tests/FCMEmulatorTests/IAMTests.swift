import Foundation
import Testing

@testable import FCMEmulator

/// The emulator's IAM: Google's documented roles, the permission each endpoint needs, who belongs to which
/// project, and the checks on requests (run through the responder, without sockets).
@Suite struct IAMTests {
    // MARK: Roles and the permission table

    @Test func rolesHoldTheDocumentedPermissions() {
        let all: Set<String> = [
            "cloudmessaging.messages.create", "cloudmessaging.topicSubscriptions.create", "cloudmessaging.topicSubscriptions.delete",
            "cloudmessaging.topicSubscriptions.get", "cloudmessaging.topicSubscriptions.list", "cloudmessaging.topicSubscriptions.update",
        ]
        func names(_ role: String) -> Set<String>? { IAMRoles.predefined[role].map { Set($0.map(\.rawValue)) } }
        #expect(names("roles/firebasecloudmessaging.admin") == all)
        #expect(names("roles/cloudmessaging.editor") == all)
        #expect(names("roles/firebasecloudmessaging.viewer") == ["cloudmessaging.topicSubscriptions.get", "cloudmessaging.topicSubscriptions.list"])
        #expect(IAMRoles.documented == ["roles/firebasecloudmessaging.admin", "roles/cloudmessaging.editor", "roles/firebasecloudmessaging.viewer"])
        for role in ["roles/owner", "roles/editor", "roles/firebase.admin"] { #expect(names(role) == all, "\(role)") }
        for role in ["roles/viewer", "roles/firebase.viewer"] { #expect(names(role)?.contains("cloudmessaging.messages.create") == false) }
    }

    static func request(_ method: String, _ path: String, query: String? = nil, body: String? = nil, headers: [String: String] = [:])
        -> EmulatorRequest
    {
        EmulatorRequest(method: method, rawPath: path, rawQuery: query, headers: headers, body: Data((body ?? "").utf8))
    }

    /// Every FCM endpoint needs a permission, and the checks use the table the docs and the admin API show.
    @Test func everyFCMEndpointMapsToItsPermission() {
        let requests: [(EmulatorRequest, String)] = [
            (Self.request("POST", "/v1/projects/p/messages:send"), "cloudmessaging.messages.create"),
            (
                Self.request("POST", "/v1/projects/p/registrations/r/topicSubscriptions", query: "topicName=t"),
                "cloudmessaging.topicSubscriptions.create"
            ),
            (Self.request("GET", "/v1/projects/p/registrations/r/topicSubscriptions/t"), "cloudmessaging.topicSubscriptions.get"),
            (Self.request("GET", "/v1/projects/p/registrations/r/topicSubscriptions"), "cloudmessaging.topicSubscriptions.list"),
            (Self.request("PATCH", "/v1/projects/p/registrations/r/topicSubscriptions/t"), "cloudmessaging.topicSubscriptions.update"),
            (Self.request("DELETE", "/v1/projects/p/registrations/r/topicSubscriptions/t"), "cloudmessaging.topicSubscriptions.delete"),
            (Self.request("POST", "/iid/v1:batchAdd"), "cloudmessaging.topicSubscriptions.create"),
            (Self.request("POST", "/iid/v1/r/rel/topics/t"), "cloudmessaging.topicSubscriptions.create"),
            (Self.request("POST", "/iid/v1:batchRemove"), "cloudmessaging.topicSubscriptions.delete"),
            (Self.request("GET", "/iid/info/r"), "cloudmessaging.topicSubscriptions.list"),
            (Self.request("POST", "/fcm/notification", body: #"{"operation":"create"}"#), "cloudmessaging.topicSubscriptions.create"),
            (Self.request("POST", "/fcm/notification", body: #"{"operation":"add"}"#), "cloudmessaging.topicSubscriptions.create"),
            (Self.request("POST", "/fcm/notification", body: #"{"operation":"remove"}"#), "cloudmessaging.topicSubscriptions.delete"),
            (Self.request("GET", "/fcm/notification", query: "notification_key_name=g"), "cloudmessaging.topicSubscriptions.get"),
            (Self.request("GET", "/fcm/notification/export"), "cloudmessaging.topicSubscriptions.list"),
        ]
        var covered: Set<Endpoint> = []
        for (request, permission) in requests {
            guard let endpoint = Endpoint.classify(request) else {
                Issue.record("\(request.method) \(request.path) is no endpoint")
                continue
            }
            covered.insert(endpoint)
            #expect(IAMCheck.permission(endpoint, request)?.rawValue == permission, "\(request.method) \(request.path)")
            let operation = request.jsonObject?["operation"] as? String
            let row = IAMCheck.table.first { $0.endpoint == endpoint && $0.request == operation }
            #expect(row?.permission.rawValue == permission, "the table agrees for \(endpoint.rawValue) \(operation ?? "")")
        }
        let fcm = Set(Endpoint.allCases.filter { ![.oauthToken, .stsToken, .iamGenerateAccessToken, .metadata].contains($0) })
        #expect(covered == fcm, "every FCM endpoint is checked")
        #expect(Set(IAMCheck.table.filter(\.documented).map(\.endpoint.rawValue)).allSatisfy { $0.hasPrefix("messages.") || $0.hasPrefix("topics.") })
    }

    // MARK: The policy

    @Test func iamFlagsParseAndNormaliseMembers() throws {
        let binding = try IAMPolicy.binding("planner@acme-ci.iam.gserviceaccount.com=roles/firebasecloudmessaging.viewer@acme-prod")
        #expect(binding.member == "serviceAccount:planner@acme-ci.iam.gserviceaccount.com")
        #expect(binding.role == "roles/firebasecloudmessaging.viewer")
        #expect(binding.project == "acme-prod")
        #expect(IAMPolicy.member("dev@example.com") == "user:dev@example.com")
        #expect(
            IAMPolicy.member("principalSet://iam.googleapis.com/projects/1/locations/global/workloadIdentityPools/ci/*").hasPrefix("principalSet://"))
        #expect(throws: EmulatorSetupError.self) { try IAMPolicy.binding("no-role-here") }
        var policy = IAMPolicy()
        policy.bindings = [try IAMPolicy.binding("a@p.iam.gserviceaccount.com=roles/firebasecloudmessaging.viewr@p")]
        #expect(throws: EmulatorSetupError.self) { try policy.validate() }

        let (token, principal) = TokenAuthority.acceptedToken("tok=sa@p.iam.gserviceaccount.com", projectID: "emu")
        #expect(token == "tok" && principal.member == "serviceAccount:sa@p.iam.gserviceaccount.com")
        let padded = TokenAuthority.acceptedToken("YWJjZA==", projectID: "emu")
        #expect(padded.token == "YWJjZA==" && padded.principal.member == "serviceAccount:fcmctl-test@emu.iam.gserviceaccount.com")
    }

    @Test func theDefaultIsAdminOnTheOwnProjectAndAGrantThereReplacesIt() throws {
        let sa = Principal.serviceAccount("sa@p.iam.gserviceaccount.com")
        var policy = IAMPolicy()
        #expect(policy.allows(sa, home: "p", .subscriptionsCreate, on: "p"))
        #expect(!policy.allows(sa, home: "p", .subscriptionsList, on: "q"), "nothing elsewhere")

        policy.bindings = [try IAMPolicy.binding("sa@p.iam.gserviceaccount.com=roles/firebasecloudmessaging.viewer@p")]
        #expect(policy.allows(sa, home: "p", .subscriptionsList, on: "p"))
        #expect(!policy.allows(sa, home: "p", .subscriptionsCreate, on: "p"), "the viewer grant replaces the default admin")

        policy.bindings = [try IAMPolicy.binding("sa@p.iam.gserviceaccount.com=roles/cloudmessaging.editor@q")]
        #expect(policy.allows(sa, home: "p", .messagesCreate, on: "q"))
        #expect(policy.allows(sa, home: "p", .messagesCreate, on: "p"), "a grant elsewhere keeps the default at home")

        policy.bindings.append(try IAMPolicy.binding("allAuthenticatedUsers=roles/firebasecloudmessaging.viewer@r"))
        #expect(policy.allows(Principal(member: "user:anyone@example.com"), home: "x", .subscriptionsGet, on: "r"))
        #expect(policy.allows(.serviceAccount("other@r.iam.gserviceaccount.com"), home: "r", .messagesCreate, on: "r"), "it adds to the default")

        policy.defaultGrant = .none
        #expect(!policy.allows(sa, home: "p", .subscriptionsGet, on: "p"))
        #expect(policy.allows(sa, home: "p", .messagesCreate, on: "q"))
        policy.defaultGrant = .anyProject
        #expect(policy.allows(sa, home: "p", .subscriptionsDelete, on: "anything"))
    }

    @Test func thePolicyFileTakesGcloudsBindingsNumbersAndCustomRoles() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("iam-\(UUID().uuidString).json").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        try #"""
        {"default": "none",
         "projects": {"acme-prod": {"number": "222", "bindings": [
             {"role": "roles/firebasecloudmessaging.viewer", "members": ["serviceAccount:planner@acme-ci.iam.gserviceaccount.com"]},
             {"role": "projects/acme-prod/roles/sender", "members": ["sender@acme-ci.iam.gserviceaccount.com"]}]}},
         "roles": {"projects/acme-prod/roles/sender": {"includedPermissions": ["cloudmessaging.messages.create"]}}}
        """#.write(toFile: path, atomically: true, encoding: .utf8)
        var policy = IAMPolicy()
        try policy.read(file: path)
        #expect(policy.defaultGrant == .none)
        #expect(policy.projectNumbers == ["acme-prod": "222"])
        let sender = Principal.serviceAccount("sender@acme-ci.iam.gserviceaccount.com")
        #expect(policy.allows(sender, home: "acme-ci", .messagesCreate, on: "acme-prod"))
        #expect(!policy.allows(sender, home: "acme-ci", .subscriptionsList, on: "acme-prod"))
        #expect(!policy.allows(sender, home: "acme-ci", .messagesCreate, on: "acme-ci"), "default none: nothing at home either")

        try #"{"projects": {"p": {"bindings": [{"role": "roles/owner", "members": ["user:a@b.c"], "condition": {"expression": "true"}}]}}}"#
            .write(toFile: path, atomically: true, encoding: .utf8)
        var conditional = IAMPolicy()
        #expect(throws: EmulatorSetupError.self) { try conditional.read(file: path) }
        try #"{"binding": []}"#.write(toFile: path, atomically: true, encoding: .utf8)
        var misspelt = IAMPolicy()
        #expect(throws: EmulatorSetupError.self) { try misspelt.read(file: path) }
    }

    // MARK: Projects of principals

    @Test func aPrincipalBelongsToTheProjectItsNameOrItsSourceSays() async {
        let store = EmulatorStore(autoRegister: false)
        await store.link(sender: "555", to: "linked-project")
        let iam = IAMCheck(policy: IAMPolicy(), projectID: "emulator-project", senderID: "123", store: store)
        #expect(await iam.home(of: .serviceAccount("deployer@acme-prod.iam.gserviceaccount.com")) == "acme-prod")
        #expect(await iam.home(of: .serviceAccount("legacy-app@appspot.gserviceaccount.com")) == "legacy-app")
        #expect(await iam.home(of: .serviceAccount("555-compute@developer.gserviceaccount.com")) == "linked-project")
        #expect(await iam.home(of: .serviceAccount("123-compute@developer.gserviceaccount.com")) == "emulator-project")
        #expect(await iam.home(of: .serviceAccount("odd@example.com", project: "key-project")) == "key-project", "the key file's project_id")
        #expect(await iam.home(of: Principal(member: "user:cid.apps.googleusercontent.com")) == "emulator-project")
        let pool = Principal.federated(audience: "//iam.googleapis.com/projects/555/locations/global/workloadIdentityPools/ci/providers/github")
        #expect(pool.member == "principalSet://iam.googleapis.com/projects/555/locations/global/workloadIdentityPools/ci/*")
        #expect(await iam.home(of: pool) == "linked-project")
        #expect(
            await iam.home(of: .federated(audience: "//iam.googleapis.com/projects/9/locations/global/workloadIdentityPools/x/providers/y")) == "9")

        var policy = IAMPolicy()
        policy.projectNumbers = ["acme-prod": "222"]
        let numbered = IAMCheck(policy: policy, projectID: "emulator-project", senderID: "123", store: store)
        #expect(await numbered.project(ofSender: "222") == "acme-prod", "the policy file's number claims its sender")
        #expect(await numbered.project(ofSender: "555") == "linked-project")
        #expect(await numbered.project(ofSender: "123") == nil, "--sender-id claims nothing for the device-group API")
    }

    // MARK: The checks, through the responder

    final class Fixture: Sendable {
        let services: EmulatorServices
        let responder: EmulatorResponder

        init(_ arguments: [String]) async throws {
            let configuration = try EmulatorCommand.configuration(["--project-id", "dev"] + arguments)
            services = try EmulatorServices(configuration: configuration)
            for (project, number) in configuration.iam.projectNumbers { await services.store.link(sender: number, to: project) }
            responder = EmulatorResponder(services: services)
            await services.store.link(sender: "111", to: "dev")
            await services.store.link(sender: "222", to: "prod")
            for (id, project) in [("dev-1:APA91b", "dev"), ("prod-1:APA91b", "prod")] {
                await services.store.register(id, kind: "token", project: project)
            }
        }

        func token(for email: String) async -> String {
            await services.authority.issue(to: .serviceAccount(email), scopes: [ScopeCheck.firebaseMessagingScope]).token
        }

        func send(_ request: EmulatorRequest, token: String?) async -> EmulatorResponse {
            var request = request
            if let token { request.headers["authorization"] = "Bearer \(token)" }
            request.headers["access_token_auth"] = "true"
            let endpoint = Endpoint.classify(request)
            let identity = await services.authority.identity(of: token ?? "")
            return await responder.answer(request, endpoint: endpoint, registrations: [], identity: identity)
        }
    }

    static func json(_ response: EmulatorResponse) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: response.body) as? [String: Any]) ?? [:]
    }

    /// The permission a 403 names, from google.rpc.Status's ErrorInfo.
    static func deniedPermission(_ response: EmulatorResponse) -> String? {
        guard response.status == 403, let error = json(response)["error"] as? [String: Any], error["status"] as? String == "PERMISSION_DENIED",
            let info = (error["details"] as? [[String: Any]])?.first, info["reason"] as? String == "IAM_PERMISSION_DENIED"
        else { return nil }
        return (info["metadata"] as? [String: String])?["permission"]
    }

    static let subscribe = request("POST", "/v1/projects/dev/registrations/dev-1%3AAPA91b/topicSubscriptions", query: "topicName=news", body: "{}")
    static let list = request("GET", "/v1/projects/dev/registrations/dev-1%3AAPA91b/topicSubscriptions")

    @Test func aViewerCanListButNotCreate() async throws {
        let fixture = try await Fixture(["--iam", "planner@dev.iam.gserviceaccount.com=roles/firebasecloudmessaging.viewer@dev"])
        let planner = await fixture.token(for: "planner@dev.iam.gserviceaccount.com")
        #expect(await fixture.send(Self.list, token: planner).status == 200)
        let refused = await fixture.send(Self.subscribe, token: planner)
        #expect(Self.deniedPermission(refused) == "cloudmessaging.topicSubscriptions.create")
        let error = try #require(Self.json(refused)["error"] as? [String: Any])
        #expect(
            error["message"] as? String
                == "Permission 'cloudmessaging.topicSubscriptions.create' denied on resource '//cloudresourcemanager.googleapis.com/projects/dev' (or it may not exist)."
        )
        let info = try #require((error["details"] as? [[String: Any]])?.first)
        #expect(info["@type"] as? String == "type.googleapis.com/google.rpc.ErrorInfo")
        #expect((info["metadata"] as? [String: String])?["resource"] == "projects/dev")
        #expect(await fixture.services.store.topics(of: "dev-1:APA91b").isEmpty, "nothing changed")

        let send = Self.request("POST", "/v1/projects/dev/messages:send", body: #"{"message":{"topic":"news"}}"#)
        #expect(Self.deniedPermission(await fixture.send(send, token: planner)) == "cloudmessaging.messages.create")
        // The IID API answers in its own flat shape, naming the permission.
        let batch = Self.request("POST", "/iid/v1:batchAdd", body: #"{"to":"/topics/news","registration_tokens":["dev-1:APA91b"]}"#)
        let flat = await fixture.send(batch, token: planner)
        #expect(flat.status == 403)
        #expect((Self.json(flat)["error"] as? String)?.hasPrefix("Permission 'cloudmessaging.topicSubscriptions.create' denied") == true)
        #expect(await fixture.send(Self.request("GET", "/iid/info/dev-1%3AAPA91b"), token: planner).status == 200)

        // Its project's default admin may do both.
        let deployer = await fixture.token(for: "deployer@dev.iam.gserviceaccount.com")
        #expect(await fixture.send(Self.subscribe, token: deployer).status == 200)
    }

    @Test func anotherProjectsAdminIsRefused() async throws {
        let fixture = try await Fixture([])
        let prod = await fixture.token(for: "deployer@prod.iam.gserviceaccount.com")
        #expect(Self.deniedPermission(await fixture.send(Self.list, token: prod)) == "cloudmessaging.topicSubscriptions.list")
        #expect(Self.deniedPermission(await fixture.send(Self.subscribe, token: prod)) == "cloudmessaging.topicSubscriptions.create")
        let create = Self.request(
            "POST", "/fcm/notification", body: #"{"operation":"create","notification_key_name":"g","registration_ids":["dev-1:APA91b"]}"#,
            headers: ["project_id": "111"])
        let group = await fixture.send(create, token: prod)
        #expect(group.status == 403)
        #expect((Self.json(group)["error"] as? String)?.contains("projects/dev'") == true, "the project the sender id belongs to")
        #expect(await fixture.services.store.group(named: .init(senderId: "111", name: "g")) == nil)
        // Granted a role there, it may.
        let granted = try await Fixture(["--iam", "deployer@prod.iam.gserviceaccount.com=roles/firebasecloudmessaging.admin@dev"])
        let token = await granted.token(for: "deployer@prod.iam.gserviceaccount.com")
        #expect(await granted.send(create, token: token).status == 200)
    }

    @Test func anUnclaimedSenderIsRefusedUnlessEveryProjectIsEveryones() async throws {
        let create = Self.request(
            "POST", "/fcm/notification", body: #"{"operation":"create","notification_key_name":"g","registration_ids":["dev-1:APA91b"]}"#,
            headers: ["project_id": "999"])
        let fixture = try await Fixture([])
        let deployer = await fixture.token(for: "deployer@dev.iam.gserviceaccount.com")
        let refused = await fixture.send(create, token: deployer)
        #expect(refused.status == 403)
        #expect(
            Self.json(refused)["error"] as? String
                == "Permission 'cloudmessaging.topicSubscriptions.create' denied on resource '//cloudresourcemanager.googleapis.com/projects/999' (or it may not exist)."
        )
        #expect(await fixture.services.store.group(named: .init(senderId: "999", name: "g")) == nil, "no group made")
        let get = Self.request("GET", "/fcm/notification", query: "notification_key_name=g", headers: ["project_id": "999"])
        #expect(await fixture.send(get, token: deployer).status == 403)

        let old = try await Fixture(["--iam-default", "any-project"])
        #expect(await old.send(create, token: await old.token(for: "deployer@dev.iam.gserviceaccount.com")).status == 200)
    }

    @Test func ownerAndNoAuthMayDoAnything() async throws {
        let fixture = try await Fixture(["--iam-default", "none"])
        let unclaimed = Self.request(
            "POST", "/fcm/notification", body: #"{"operation":"create","notification_key_name":"g","registration_ids":["dev-1:APA91b"]}"#,
            headers: ["project_id": "999"])
        #expect(await fixture.send(unclaimed, token: "owner").status == 200)
        #expect(await fixture.send(Self.subscribe, token: "owner").status == 200)
        let elsewhere = Self.request("GET", "/v1/projects/prod/registrations/prod-1%3AAPA91b/topicSubscriptions")
        #expect(await fixture.send(elsewhere, token: "owner").status == 200)

        let open = try await Fixture(["--no-auth", "--iam-default", "none"])
        #expect(await open.send(Self.subscribe, token: nil).status == 200)
        // Even a principal's token is not checked when nothing is.
        #expect(await open.send(elsewhere, token: await open.token(for: "x@q.iam.gserviceaccount.com")).status == 200)
    }

    @Test func theListingShowsPrincipalsTheirProjectsAndRoles() async throws {
        let fixture = try await Fixture([
            "--iam", "planner@dev.iam.gserviceaccount.com=roles/firebasecloudmessaging.viewer@dev", "--accept-token",
            "ci=applier@ops.iam.gserviceaccount.com",
        ])
        _ = await fixture.token(for: "planner@dev.iam.gserviceaccount.com")
        let listing = await fixture.services.iam.listing(authority: fixture.services.authority, noAuth: false)
        let rows = try #require(listing["principals"] as? [[String: Any]])
        func row(_ member: String) -> [String: Any]? { rows.first { $0["member"] as? String == member } }
        let planner = try #require(row("serviceAccount:planner@dev.iam.gserviceaccount.com"))
        #expect(planner["project"] as? String == "dev")
        #expect(planner["tokens_issued"] as? Int == 1)
        #expect((planner["roles"] as? [[String: String]]) == [["project": "dev", "role": "roles/firebasecloudmessaging.viewer", "from": "--iam"]])
        let applier = try #require(row("serviceAccount:applier@ops.iam.gserviceaccount.com"))
        #expect((applier["roles"] as? [[String: String]]) == [["project": "ops", "role": "roles/firebasecloudmessaging.admin", "from": "default"]])
        #expect(applier["sources"] as? [String] == ["--accept-token"])
        #expect(row("serviceAccount:123456789012-compute@developer.gserviceaccount.com")?["project"] as? String == "dev", "the metadata server's")
        #expect(listing["default"] as? String == "own-project")
        #expect((listing["roles"] as? [String: [String]])?["roles/firebasecloudmessaging.viewer"]?.count == 2)
    }
}
