import Foundation

/// The OAuth token endpoint (`POST /token`, what a generated key file's `token_uri` names), the other token
/// services, and the GCE metadata server (`MetadataServer`).
struct TokenRoutes {
    let authority: TokenAuthority
    let metadata: MetadataServer

    static let jwtGrant = "urn:ietf:params:oauth:grant-type:jwt-bearer"

    func handle(_ request: EmulatorRequest, baseURL: String) async -> EmulatorResponse? {
        switch (request.method, request.segments) {
        case ("POST", ["token"]): return await token(request, tokenURL: baseURL + "/token")
        case ("GET", ["tokeninfo"]), ("POST", ["tokeninfo"]): return await tokenInfo(request)
        case ("POST", ["v1", "token"]): return await exchange(request)
        case ("POST", ["v1", "oauthtoken"]): return await refreshWorkforceUser(request)
        case ("POST", let s) where s.count == 5 && s[0] == "v1" && s[1] == "projects" && s[3] == "serviceAccounts":
            return await generateAccessToken(request, resource: s[4])
        case (_, let s) where s.first == "computeMetadata" || s.isEmpty: return await metadata.handle(request)
        default: return nil
        }
    }

    static func oauthError(_ status: Int, _ error: String, _ description: String) -> EmulatorResponse {
        .json(status, ["error": error, "error_description": description])
    }

    func token(_ request: EmulatorRequest, tokenURL: String) async -> EmulatorResponse {
        let form = Self.parseForm(request.body)
        do {
            let grant: (token: String, expiresIn: Int)
            switch form["grant_type"] {
            case Self.jwtGrant:
                guard let assertion = form["assertion"] else {
                    return Self.oauthError(400, "invalid_request", "Missing required parameter: assertion")
                }
                grant = try await authority.exchange(assertion: assertion, tokenURL: tokenURL)
            case "refresh_token":
                grant = try await authority.exchange(refreshToken: form["refresh_token"] ?? "", clientID: form["client_id"], scope: form["scope"])
            case let other:
                return Self.oauthError(400, "unsupported_grant_type", "Invalid grant_type: \(other ?? "")")
            }
            return .json(200, ["access_token": grant.token, "expires_in": grant.expiresIn, "token_type": "Bearer"])
        } catch TokenAuthority.GrantError.invalidGrant(let description) {
            return Self.oauthError(400, "invalid_grant", description)
        } catch TokenAuthority.GrantError.invalidScope(let description) {
            return Self.oauthError(400, "invalid_scope", description)
        } catch TokenAuthority.GrantError.invalidRequest(let description) {
            return Self.oauthError(400, "invalid_request", description)
        } catch {
            return Self.oauthError(400, "invalid_request", "\(error)")
        }
    }

    /// STS answers in OAuth's error shape; google-auth reads `error` and `error_description` from it.
    func exchange(_ request: EmulatorRequest) async -> EmulatorResponse {
        do {
            let grant = try await authority.exchangeSubjectToken(Self.parseForm(request.body))
            return .json(
                200,
                [
                    "access_token": grant.token, "expires_in": grant.expiresIn, "token_type": "Bearer",
                    "issued_token_type": TokenAuthority.accessTokenType,
                ])
        } catch let error as TokenAuthority.GrantError {
            return Self.oauthError(error)
        } catch {
            return Self.oauthError(400, "invalid_request", "\(error)")
        }
    }

    /// Google's tokeninfo (`oauth2.googleapis.com/tokeninfo?access_token=`): how another server, such as a
    /// test's stand-in for Cloud Storage, checks that a token the emulator issued is still valid.
    func tokenInfo(_ request: EmulatorRequest) async -> EmulatorResponse {
        let token = request.query["access_token"] ?? Self.parseForm(request.body)["access_token"] ?? ""
        guard let remaining = await authority.remainingLife(of: token) else {
            return Self.oauthError(400, "invalid_token", "Invalid Value")
        }
        let principal = await authority.principal(of: token) ?? ""
        var answer: [String: Any] = ["expires_in": "\(Int(remaining))", "access_type": "online", "azp": principal]
        // Google lists the token's scopes space-separated; a static token has no scopes to list.
        if let scopes = await authority.scopes(of: token) { answer["scope"] = scopes.sorted().joined(separator: " ") }
        return .json(200, answer)
    }

    /// STS's refresh endpoint for workforce identity federation users (`external_account_authorized_user`):
    /// the refresh-token grant, the client named by HTTP basic authentication.
    func refreshWorkforceUser(_ request: EmulatorRequest) async -> EmulatorResponse {
        let form = Self.parseForm(request.body)
        guard form["grant_type"] == "refresh_token" else {
            return Self.oauthError(400, "unsupported_grant_type", "Invalid grant_type: \(form["grant_type"] ?? "")")
        }
        var clientID = form["client_id"]
        if let header = request.headers["authorization"], header.hasPrefix("Basic "),
            let decoded = Data(base64Encoded: String(header.dropFirst(6))).map({ String(decoding: $0, as: UTF8.self) })
        {
            clientID = decoded.split(separator: ":", maxSplits: 1).first.map(String.init)
        }
        do {
            let grant = try await authority.exchange(refreshToken: form["refresh_token"] ?? "", clientID: clientID, scope: form["scope"])
            return .json(200, ["access_token": grant.token, "expires_in": grant.expiresIn, "token_type": "Bearer"])
        } catch let error as TokenAuthority.GrantError {
            return Self.oauthError(error)
        } catch {
            return Self.oauthError(400, "invalid_request", "\(error)")
        }
    }

    /// `resource` is `EMAIL:generateAccessToken`; the caller's bearer token was checked before routing.
    func generateAccessToken(_ request: EmulatorRequest, resource: String) async -> EmulatorResponse {
        let suffix = ":generateAccessToken"
        guard resource.hasSuffix(suffix) else { return .rpcError(404, "fcm-emulator does not serve \(request.method) \(request.path)") }
        let email = String(resource.dropLast(suffix.count))
        do {
            let grant = try await authority.generateAccessToken(email: email, body: request.jsonObject)
            return .json(200, ["accessToken": grant.token, "expireTime": grant.expireTime])
        } catch TokenAuthority.IAMError.invalidArgument(let message) {
            return .rpcError(400, message)
        } catch TokenAuthority.IAMError.notFound(let message) {
            return .rpcError(404, message)
        } catch {
            return .rpcError(400, "\(error)")
        }
    }

    static func oauthError(_ error: TokenAuthority.GrantError) -> EmulatorResponse {
        switch error {
        case .invalidGrant(let description): oauthError(400, "invalid_grant", description)
        case .invalidScope(let description): oauthError(400, "invalid_scope", description)
        case .invalidRequest(let description): oauthError(400, "invalid_request", description)
        case .unsupportedGrantType(let description): oauthError(400, "unsupported_grant_type", description)
        }
    }

    static func parseForm(_ body: Data) -> [String: String] {
        var form: [String: String] = [:]
        for pair in String(decoding: body, as: UTF8.self).split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let decode = { (text: Substring) in String(text).replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? String(text) }
            form[decode(parts[0])] = parts.count > 1 ? decode(parts[1]) : ""
        }
        return form
    }
}

/// Google's answers to a request without valid credentials: JSON by default, an HTML page when the
/// emulator is told to imitate the front ends that answer that way (firebase-admin-go#533).
enum Unauthorized {
    static func response(html: Bool) -> EmulatorResponse {
        if html {
            let page =
                "<HTML>\n<HEAD>\n<TITLE>Unauthorized</TITLE>\n</HEAD>\n<BODY BGCOLOR=\"#FFFFFF\" TEXT=\"#000000\">\n<H1>Unauthorized</H1>\n<H2>Error 401</H2>\n</BODY>\n</HTML>\n"
            return EmulatorResponse(status: 401, body: Data(page.utf8), contentType: "text/html; charset=UTF-8")
        }
        return .rpcError(
            401,
            "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential. See https://developers.google.com/identity/sign-in/web/devconsole-project."
        )
    }
}
