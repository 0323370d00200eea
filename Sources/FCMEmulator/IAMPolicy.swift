import Foundation

/// The IAM permissions of the FCM APIs, as Google lists them for its roles
/// (https://cloud.google.com/iam/docs/roles-permissions/firebasecloudmessaging).
enum FCMPermission: String, CaseIterable, Sendable, Comparable {
    case messagesCreate = "cloudmessaging.messages.create"
    case subscriptionsCreate = "cloudmessaging.topicSubscriptions.create"
    case subscriptionsDelete = "cloudmessaging.topicSubscriptions.delete"
    case subscriptionsGet = "cloudmessaging.topicSubscriptions.get"
    case subscriptionsList = "cloudmessaging.topicSubscriptions.list"
    case subscriptionsUpdate = "cloudmessaging.topicSubscriptions.update"

    static func < (a: FCMPermission, b: FCMPermission) -> Bool { a.rawValue < b.rawValue }

    static let all = Set(allCases)
    static let readOnly: Set<FCMPermission> = [.subscriptionsGet, .subscriptionsList]
}

/// The roles the emulator knows, by the permissions of the FCM APIs they hold.
enum IAMRoles {
    static let admin = "roles/firebasecloudmessaging.admin"
    static let editor = "roles/cloudmessaging.editor"
    static let viewer = "roles/firebasecloudmessaging.viewer"

    /// [DOC] the three FCM roles, as Google's role page lists them. [GUESS] the basic and Firebase roles:
    /// Google's permission index puts `cloudmessaging.messages.create` in roles/owner, roles/editor and
    /// roles/firebase.admin; that they also hold every `topicSubscriptions` permission, and that roles/viewer
    /// and roles/firebase.viewer hold the read ones, follows their pattern (owner and editor write everything,
    /// viewers read) and is not listed anywhere the emulator's authors found.
    static let predefined: [String: Set<FCMPermission>] = [
        admin: FCMPermission.all,
        editor: FCMPermission.all,
        viewer: FCMPermission.readOnly,
        "roles/owner": FCMPermission.all,
        "roles/editor": FCMPermission.all,
        "roles/firebase.admin": FCMPermission.all,
        "roles/viewer": FCMPermission.readOnly,
        "roles/firebase.viewer": FCMPermission.readOnly,
    ]

    /// Roles whose FCM permissions Google's role page lists; the others' are the emulator's guess.
    static let documented: Set<String> = [admin, editor, viewer]
}

/// A principal: who an access token stands for. `member` is written as IAM writes members
/// (`serviceAccount:EMAIL`, `user:ID`, `principalSet://iam.googleapis.com/…`).
struct Principal: Hashable, Sendable {
    var member: String
    /// The project the principal is known to belong to when its name does not say: the metadata server's
    /// account (the emulator's project), a trusted key file's `project_id`.
    var project: String? = nil

    static func serviceAccount(_ email: String, project: String? = nil) -> Principal {
        Principal(member: "serviceAccount:" + email, project: project)
    }

    /// The address of a service account or user, without the member type.
    var email: String? {
        guard let colon = member.firstIndex(of: ":"), !member.hasPrefix("principal") else { return nil }
        return String(member[member.index(after: colon)...])
    }

    /// What Google's tokeninfo calls the authorized party: the address for accounts, the member otherwise.
    var displayName: String { email ?? member }

    /// The members of workload identity federation: every identity of the pool named by an STS `audience`
    /// (`//iam.googleapis.com/projects/N/locations/global/workloadIdentityPools/POOL/providers/P`), as IAM
    /// names them in a binding: `principalSet://iam.googleapis.com/projects/N/…/workloadIdentityPools/POOL/*`.
    /// The emulator does not read the subject token, so it cannot tell one identity of a pool from another.
    static func federated(audience: String) -> Principal {
        var pool = String(audience.dropFirst(audience.hasPrefix("//") ? 2 : 0))
        if let providers = pool.range(of: "/providers/") { pool = String(pool[..<providers.lowerBound]) }
        return Principal(member: "principalSet://" + pool + "/*")
    }
}

/// Who holds which role where: `--iam PRINCIPAL=ROLE@PROJECT`, `--iam-policy FILE` and the default.
/// IAM is additive; the default is what stands where nothing was said: a principal holds
/// roles/firebasecloudmessaging.admin on its own project unless a binding names it on that project.
struct IAMPolicy: Sendable {
    enum DefaultGrant: String, CaseIterable, Sendable {
        /// Admin on the principal's own project, nothing elsewhere (the default).
        case ownProject = "own-project"
        /// Only what bindings grant.
        case none
        /// Admin on every project, and a sender id no project claims is every project's: the emulator
        /// before it modelled IAM.
        case anyProject = "any-project"
    }

    struct Binding: Hashable, Sendable {
        var member: String
        var role: String
        var project: String
        /// Where it was given: `--iam` or the policy file's path.
        var source: String
    }

    /// One role of a principal on one project, and why it holds it.
    struct Grant: Hashable, Sendable, Comparable {
        var role: String
        var project: String
        /// `default`, `--iam`, or the policy file.
        var source: String

        static func < (a: Grant, b: Grant) -> Bool { (a.project, a.role, a.source) < (b.project, b.role, b.source) }
    }

    var defaultGrant = DefaultGrant.ownProject
    var bindings: [Binding] = []
    /// Custom roles of the policy file, by name.
    var customRoles: [String: Set<FCMPermission>] = [:]
    /// Project id → project number (sender id), from the policy file.
    var projectNumbers: [String: String] = [:]

    /// The member IAM matches `text` as: an address alone is a service account's (`…gserviceaccount.com`)
    /// or a user's; a member with its type is kept.
    static func member(_ text: String) -> String {
        let text = text.trimmingCharacters(in: .whitespaces)
        if text.hasPrefix("principal://") || text.hasPrefix("principalSet://") || text.contains(":") || !text.contains("@") {
            return text
        }
        return (text.hasSuffix(".gserviceaccount.com") ? "serviceAccount:" : "user:") + text
    }

    func permissions(ofRole role: String) -> Set<FCMPermission>? { IAMRoles.predefined[role] ?? customRoles[role] }

    var knownRoles: [String] { (Array(IAMRoles.predefined.keys) + Array(customRoles.keys)).sorted() }

    /// `PRINCIPAL=ROLE@PROJECT`, as `--iam` takes it.
    static func binding(_ text: String, source: String = "--iam") throws -> Binding {
        guard let equals = text.firstIndex(of: "="), let at = text.lastIndex(of: "@"), at > equals else {
            throw EmulatorSetupError("--iam takes PRINCIPAL=ROLE@PROJECT, e.g. sa@p.iam.gserviceaccount.com=\(IAMRoles.viewer)@p; got '\(text)'")
        }
        let principal = String(text[..<equals])
        let role = String(text[text.index(after: equals)..<at])
        let project = String(text[text.index(after: at)...])
        guard !principal.isEmpty, !role.isEmpty, !project.isEmpty else {
            throw EmulatorSetupError("--iam takes PRINCIPAL=ROLE@PROJECT; got '\(text)'")
        }
        return Binding(member: member(principal), role: role, project: project, source: source)
    }

    /// Every binding's role must be one the emulator knows: a misspelt role would otherwise grant nothing.
    func validate() throws {
        for binding in bindings where permissions(ofRole: binding.role) == nil {
            throw EmulatorSetupError(
                "\(binding.source): unknown role '\(binding.role)' for \(binding.member); known roles: \(knownRoles.joined(separator: ", "))")
        }
    }

    /// The roles `principal` holds on `project`, whose own project is `home`. A binding naming the principal
    /// there replaces the default; one for `allAuthenticatedUsers` only adds to it.
    func grants(of principal: Principal, home: String, on project: String) -> [Grant] {
        let named = bindings.filter { $0.project == project && $0.member == principal.member }
        let everyone = bindings.filter { $0.project == project && $0.member == "allAuthenticatedUsers" }
        var grants = Set((named + everyone).map { Grant(role: $0.role, project: project, source: $0.source) })
        switch defaultGrant {
        case .ownProject where named.isEmpty && home == project, .anyProject where named.isEmpty:
            grants.insert(Grant(role: IAMRoles.admin, project: project, source: "default"))
        default: break
        }
        return grants.sorted()
    }

    func allows(_ principal: Principal, home: String, _ permission: FCMPermission, on project: String) -> Bool {
        grants(of: principal, home: home, on: project).contains { permissions(ofRole: $0.role)?.contains(permission) == true }
    }
}

extension IAMPolicy {
    /// `--iam-policy FILE`: per project, the bindings as `gcloud projects get-iam-policy --format=json` prints
    /// them (role and members; conditions are not modelled), optionally the project's number, and custom roles
    /// as IAM's Role resource lists their permissions:
    ///
    ///     {"default": "own-project",
    ///      "projects": {"acme-prod": {"number": "222222222222",
    ///                                 "bindings": [{"role": "roles/firebasecloudmessaging.viewer",
    ///                                               "members": ["serviceAccount:planner@acme-ci.iam.gserviceaccount.com"]}]}},
    ///      "roles": {"projects/acme-prod/roles/fcmSender": {"includedPermissions": ["cloudmessaging.messages.create"]}}}
    mutating func read(file path: String) throws {
        let data: Data
        do { data = try Data(contentsOf: URL(fileURLWithPath: path)) } catch {
            throw EmulatorSetupError("--iam-policy \(path): cannot read it (\(error.localizedDescription))")
        }
        guard let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw EmulatorSetupError("--iam-policy \(path): not a JSON object")
        }
        func fail(_ text: String) -> EmulatorSetupError { EmulatorSetupError("--iam-policy \(path): \(text)") }
        let unknown = Set(object.keys).subtracting(["default", "projects", "roles"])
        guard unknown.isEmpty else { throw fail("unknown field \(unknown.sorted().joined(separator: ", ")); it takes default, projects, roles") }
        if let text = object["default"] {
            guard let name = text as? String, let value = DefaultGrant(rawValue: name) else {
                throw fail("default must be one of \(DefaultGrant.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            defaultGrant = value
        }
        for (name, value) in object["roles"] as? [String: Any] ?? [:] {
            guard IAMRoles.predefined[name] == nil else { throw fail("role \(name) is Google's own: it cannot be redefined") }
            guard let role = value as? [String: Any], let listed = role["includedPermissions"] as? [String] else {
                throw fail("role \(name) needs {\"includedPermissions\": [...]}")
            }
            var permissions: Set<FCMPermission> = []
            for text in listed {
                guard let permission = FCMPermission(rawValue: text) else {
                    throw fail(
                        "role \(name): unknown permission \(text); the FCM permissions are \(FCMPermission.allCases.map(\.rawValue).sorted().joined(separator: ", "))"
                    )
                }
                permissions.insert(permission)
            }
            customRoles[name] = permissions
        }
        if object["roles"] != nil && !(object["roles"] is [String: Any]) { throw fail("roles must be an object") }
        guard let projects = object["projects"] as? [String: Any] ?? (object["projects"] == nil ? [:] : nil) else {
            throw fail("projects must be an object: {\"PROJECT_ID\": {\"number\": \"…\", \"bindings\": [...]}}")
        }
        for (project, value) in projects.sorted(by: { $0.key < $1.key }) {
            guard let entry = value as? [String: Any] else { throw fail("projects.\(project) must be an object") }
            let extra = Set(entry.keys).subtracting(["number", "bindings", "etag", "version"])
            guard extra.isEmpty else {
                throw fail("projects.\(project): unknown field \(extra.sorted().joined(separator: ", ")); it takes number, bindings")
            }
            if let number = entry["number"] {
                guard let text = (number as? String) ?? (number as? NSNumber).map({ $0.stringValue }), !text.isEmpty else {
                    throw fail("projects.\(project).number must be the project number (the sender id)")
                }
                projectNumbers[project] = text
            }
            for (index, item) in (entry["bindings"] as? [[String: Any]] ?? []).enumerated() {
                guard let role = item["role"] as? String, let members = item["members"] as? [String] else {
                    throw fail("projects.\(project).bindings[\(index)] needs a role and members")
                }
                guard item["condition"] == nil else {
                    throw fail("projects.\(project).bindings[\(index)]: conditions are not modelled by the emulator")
                }
                for member in members {
                    bindings.append(Binding(member: Self.member(member), role: role, project: project, source: path))
                }
            }
        }
        try validate()
    }
}
