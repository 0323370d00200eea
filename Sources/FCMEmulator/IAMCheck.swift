import Foundation

/// Checks each FCM request's permission on the project it addresses, after the token and its scopes, as
/// Google's front end does before the API runs. The `owner` token and `--no-auth` are not principals:
/// nothing is checked for them.
struct IAMCheck: Sendable {
    let policy: IAMPolicy
    /// The emulator's own project and number (`--project-id`, `--sender-id`).
    let projectID: String
    let senderID: String
    let store: EmulatorStore

    /// The permission each endpoint needs. The v1 mappings are Google's (each REST reference page names
    /// its permission); the legacy APIs have no IAM page, so theirs are the closest documented permission.
    static func permission(_ endpoint: Endpoint, _ request: EmulatorRequest) -> FCMPermission? {
        switch endpoint {
        case .messagesSend: .messagesCreate
        case .topicsCreate: .subscriptionsCreate
        case .topicsGet: .subscriptionsGet
        case .topicsList: .subscriptionsList
        case .topicsPatch: .subscriptionsUpdate
        case .topicsDelete: .subscriptionsDelete
        // [GUESS] subscribing through IID is creating a subscription, unsubscribing deleting one, and
        // iid/info reads every subscription of a registration, which is what topicSubscriptions.list replaces.
        case .iidBatchAdd, .iidRelation: .subscriptionsCreate
        case .iidBatchRemove: .subscriptionsDelete
        case .iidInfo: .subscriptionsList
        // [GUESS] a group is a set of registrations, like a topic's subscribers: creating one or adding
        // members creates, removing members deletes, reading a key gets, the member export lists.
        case .groupsMutate: request.jsonObject?["operation"] as? String == "remove" ? .subscriptionsDelete : .subscriptionsCreate
        case .groupsGet: .subscriptionsGet
        case .groupsExport: .subscriptionsList
        case .oauthToken, .stsToken, .iamGenerateAccessToken, .metadata: nil
        }
    }

    /// The permission table as the admin API and docs/emulator.md show it: endpoint, the request it covers
    /// when the endpoint has several, the permission, and whether Google documents that mapping.
    static let table: [(endpoint: Endpoint, request: String?, permission: FCMPermission, documented: Bool)] = [
        (.messagesSend, nil, .messagesCreate, true),
        (.topicsCreate, nil, .subscriptionsCreate, true),
        (.topicsGet, nil, .subscriptionsGet, true),
        (.topicsList, nil, .subscriptionsList, true),
        (.topicsPatch, nil, .subscriptionsUpdate, true),
        (.topicsDelete, nil, .subscriptionsDelete, true),
        (.iidBatchAdd, nil, .subscriptionsCreate, false),
        (.iidRelation, nil, .subscriptionsCreate, false),
        (.iidBatchRemove, nil, .subscriptionsDelete, false),
        (.iidInfo, nil, .subscriptionsList, false),
        (.groupsMutate, "create", .subscriptionsCreate, false),
        (.groupsMutate, "add", .subscriptionsCreate, false),
        (.groupsMutate, "remove", .subscriptionsDelete, false),
        (.groupsGet, nil, .subscriptionsGet, false),
        (.groupsExport, nil, .subscriptionsList, false),
    ]

    /// `GET /emulator/v1/principals`: every principal the emulator knows (configured, bound, or given a
    /// token), its project and its roles, and the roles and permission table the checks use.
    func listing(authority: TokenAuthority, noAuth: Bool) async -> [String: Any] {
        var principals: [String: (principal: Principal, sources: Set<String>, tokens: Int)] = [:]
        for (member, known) in await authority.known { principals[member] = (known.principal, known.sources, known.tokensIssued) }
        for binding in policy.bindings where binding.member != "allAuthenticatedUsers" {
            principals[binding.member, default: (Principal(member: binding.member), [], 0)].sources.insert(binding.source)
        }
        var rows: [[String: Any]] = []
        for (member, entry) in principals.sorted(by: { $0.key < $1.key }) {
            let home = await home(of: entry.principal)
            var projects: Set<String> = [home]
            for binding in policy.bindings where binding.member == member || binding.member == "allAuthenticatedUsers" {
                projects.insert(binding.project)
            }
            var grants = projects.flatMap { policy.grants(of: entry.principal, home: home, on: $0) }.sorted()
            if policy.defaultGrant == .anyProject { grants.append(.init(role: IAMRoles.admin, project: "*", source: "default")) }
            rows.append([
                "member": member, "project": home, "sources": entry.sources.sorted(), "tokens_issued": entry.tokens,
                "roles": grants.map { ["project": $0.project, "role": $0.role, "from": $0.source] },
            ])
        }
        var roles: [String: [String]] = [:]
        for role in policy.knownRoles { roles[role] = (policy.permissions(ofRole: role) ?? []).sorted().map(\.rawValue) }
        return [
            "default": policy.defaultGrant.rawValue,
            "unrestricted": ["the owner token"] + (noAuth ? ["every request (--no-auth)"] : []),
            "principals": rows, "roles": roles,
            "permissions": Self.table.map { row in
                var item: [String: Any] = ["endpoint": row.endpoint.rawValue, "permission": row.permission.rawValue, "documented": row.documented]
                if let request = row.request { item["operation"] = request }
                return item
            },
        ]
    }

    /// The project a principal belongs to: a service account's address names it
    /// (`NAME@PROJECT.iam.gserviceaccount.com`, `PROJECT@appspot.gserviceaccount.com`), or its key file or
    /// the metadata server says it; the default Compute Engine account and a workload identity pool name a
    /// project number. Anything else (users) is the emulator's project.
    func home(of principal: Principal) async -> String {
        if let email = principal.email, let at = email.lastIndex(of: "@") {
            let domain = email[email.index(after: at)...]
            if domain.hasSuffix(".iam.gserviceaccount.com") { return String(domain.dropLast(".iam.gserviceaccount.com".count)) }
            if domain == "appspot.gserviceaccount.com" { return String(email[..<at]) }
        }
        if let project = principal.project { return project }
        if let email = principal.email, email.hasSuffix("-compute@developer.gserviceaccount.com") {
            return await project(ofNumber: String(email.prefix { $0 != "-" }))
        }
        if principal.member.hasPrefix("principalSet://iam.googleapis.com/projects/") {
            let number = principal.member.dropFirst("principalSet://iam.googleapis.com/projects/".count).prefix { $0 != "/" }
            return await project(ofNumber: String(number))
        }
        return projectID
    }

    /// The project with this number: one that claims it as its sender id, the emulator's own (`--sender-id`
    /// is `--project-id`'s number, as the metadata server says), or the number itself (Google takes either
    /// in a resource name).
    func project(ofNumber number: String) async -> String {
        if let linked = await project(ofSender: number) { return linked }
        return number == senderID ? projectID : number
    }

    /// The project that claims a sender id: a registration's link (`POST /emulator/v1/registrations` with
    /// `sender_id`), an import's, or the policy file's `number`. Nil: no project claims it. The emulator's own
    /// `--sender-id` claims nothing for the device-group API: the default, 123456789012, is also the
    /// quickstart's, whose project is another.
    func project(ofSender sender: String) async -> String? {
        if let linked = await store.projectID(of: .sender(sender)) { return linked }
        // Linked at start; kept here too, as an import at run time replaces the store's links.
        return policy.projectNumbers.sorted { $0.key < $1.key }.first { $0.value == sender }?.key
    }

    /// The answer for a principal that lacks the endpoint's permission on the project the request addresses,
    /// or nil when it may go on.
    func refusal(_ endpoint: Endpoint, _ request: EmulatorRequest, principal: Principal) async -> EmulatorResponse? {
        guard let permission = Self.permission(endpoint, request) else { return nil }
        let home = await home(of: principal)
        let project: String
        switch endpoint {
        case .messagesSend, .topicsCreate, .topicsGet, .topicsList, .topicsPatch, .topicsDelete:
            project = request.segments[2]
        case .iidBatchAdd, .iidBatchRemove, .iidInfo, .iidRelation:
            // The IID API names no project: it acts for the principal's own (wire reference §0.7).
            project = home
        case .groupsMutate, .groupsGet:
            // No header: the API's own 400 says what is missing.
            guard let sender = request.headers["project_id"], !sender.isEmpty else { return nil }
            guard let claimed = await self.project(ofSender: sender) else {
                // A sender id no project claims is no project anyone holds a role on; before IAM it was
                // every project's, as it still is with --iam-default any-project.
                if policy.defaultGrant == .anyProject { return nil }
                return Self.denied(permission, resource: sender, flat: true)
            }
            project = claimed
        case .groupsExport:
            guard let key = request.query["notification_key"], let id = NotificationKeyCodec.decode(key),
                let (name, _) = await store.group(id: id)
            else { return nil }
            guard let claimed = await self.project(ofSender: name.senderId) else {
                return policy.defaultGrant == .anyProject ? nil : Self.denied(permission, resource: name.senderId, flat: true)
            }
            project = claimed
        case .oauthToken, .stsToken, .iamGenerateAccessToken, .metadata:
            return nil
        }
        if policy.allows(principal, home: home, permission, on: project) { return nil }
        return Self.denied(permission, resource: project, flat: endpoint.usesFlatErrors)
    }

    /// Google's words for a missing permission, recorded from FCM for cloudmessaging.messages.create
    /// (DelphiWorlds/PushIt#2): google.rpc.Status with an ErrorInfo IAM_PERMISSION_DENIED naming the permission
    /// and the project. [GUESS] the device-group and IID APIs answer in their own flat shape, with the same words.
    static func denied(_ permission: FCMPermission, resource project: String, flat: Bool) -> EmulatorResponse {
        let message =
            "Permission '\(permission.rawValue)' denied on resource '//cloudresourcemanager.googleapis.com/projects/\(project)' (or it may not exist)."
        if flat { return .flatError(403, message) }
        let info: [String: Any] = [
            "@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "IAM_PERMISSION_DENIED", "domain": "cloudresourcemanager.googleapis.com",
            "metadata": ["resource": "projects/\(project)", "permission": permission.rawValue],
        ]
        return .json(403, ["error": ["code": 403, "message": message, "status": "PERMISSION_DENIED", "details": [info]] as [String: Any]])
    }
}
