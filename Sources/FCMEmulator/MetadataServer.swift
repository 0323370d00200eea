import Foundation

/// The GCE metadata server's identity paths (`/computeMetadata/v1/…`, reached through GCE_METADATA_HOST), as
/// far as google-auth's `compute_engine` credentials and fcmctl read them: the attached service account's
/// info and token, and the project.
struct MetadataServer {
    let authority: TokenAuthority
    let projectID: String
    /// The project number, which names the default Compute Engine service account.
    let projectNumber: String
    /// The instance's access scopes (`--metadata-scope`): every token the server issues carries exactly these.
    let scopes: [String]

    static let defaultScopes = [TokenAuthority.cloudPlatformScope]

    /// The default Compute Engine service account's address, `PROJECT_NUMBER-compute@developer.gserviceaccount.com`.
    var email: String { "\(projectNumber)-compute@developer.gserviceaccount.com" }

    /// The account as a principal of the emulator's project.
    var principal: Principal { Self.principal(projectID: projectID, projectNumber: projectNumber) }

    static func principal(projectID: String, projectNumber: String) -> Principal {
        .serviceAccount("\(projectNumber)-compute@developer.gserviceaccount.com", project: projectID)
    }

    /// The metadata server answers only requests carrying `Metadata-Flavor: Google`, and says so in kind.
    func handle(_ request: EmulatorRequest) async -> EmulatorResponse {
        guard request.headers["metadata-flavor"] == "Google" else {
            return Self.text(403, "Missing Metadata-Flavor:Google header.", contentType: "text/html; charset=UTF-8")
        }
        var response: EmulatorResponse
        switch Array(request.segments.dropFirst()) {
        case let path where path.count >= 4 && path[0...1] == ["v1", "instance"] && path[2] == "service-accounts":
            response = await serviceAccount(account: path[3], rest: Array(path[4...]), request: request)
        case ["v1", "instance", "service-accounts"]:
            response = Self.text(200, "default/\n\(email)/\n")
        case ["v1", "project", "project-id"]:
            response = Self.text(200, projectID)
        case ["v1", "project", "numeric-project-id"]:
            response = Self.text(200, projectNumber)
        case []:
            // The root is what google-auth's and fcmctl's ping read: only its Metadata-Flavor header matters.
            response = Self.text(200, "computeMetadata/\n")
        case ["v1"]:
            response = Self.text(200, "instance/\nproject/\n")
        default:
            response = Self.notFound
        }
        response.extraHeaders["Metadata-Flavor"] = "Google"
        return response
    }

    /// `instance/service-accounts/{default|EMAIL}/…`. google-auth reads `…/default/?recursive=true` before
    /// each refresh (`_metadata.get_service_account_info`) and needs its `email`; without a scope of its own
    /// it then asks for a token with the `scopes` listed there.
    func serviceAccount(account: String, rest: [String], request: EmulatorRequest) async -> EmulatorResponse {
        guard account == "default" || account == email else { return Self.notFound }
        switch rest {
        case []:
            if request.query["recursive"] == "true" {
                return .json(200, ["aliases": ["default"], "email": email, "scopes": scopes])
            }
            return Self.text(200, "aliases\nemail\nidentity\nscopes\ntoken\n")
        case ["email"]: return Self.text(200, email)
        case ["aliases"]: return Self.text(200, "default\n")
        case ["scopes"]: return Self.text(200, scopes.map { $0 + "\n" }.joined())
        case ["token"]:
            // A `scopes` query is ignored: Compute Engine issues tokens with the instance's access scopes
            // whatever is asked (google-auth #633: "On Compute Engine you can request custom scopes, but they
            // are ignored"); Cloud Run and App Engine would honour it.
            let grant = await authority.issue(to: principal, scopes: Set(scopes))
            return .json(200, ["access_token": grant.token, "expires_in": grant.expiresIn, "token_type": "Bearer"])
        default: return Self.notFound
        }
    }

    static let notFound = text(404, "Not Found", contentType: "text/html; charset=UTF-8")

    static func text(_ status: Int, _ body: String, contentType: String = "application/text") -> EmulatorResponse {
        EmulatorResponse(status: status, body: Data(body.utf8), contentType: contentType)
    }
}
