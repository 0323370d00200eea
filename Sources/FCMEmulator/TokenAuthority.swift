import Crypto
import Foundation
import _CryptoExtras

/// Issues and checks OAuth access tokens the way Google's token endpoint does for the grants fcmctl and
/// the Admin SDKs use: RS256 JWT-bearer assertions from service accounts, and refresh tokens.
actor TokenAuthority {
    struct Issued {
        var expiry: Date
        var principal: Principal
        /// What the token may be used for: Google issues a token for any scope asked for, and each API
        /// refuses a token without one of its own scopes (see `ScopeCheck`).
        var scopes: Set<String>
    }

    static let googleTokenAudience = "https://oauth2.googleapis.com/token"
    static let cloudPlatformScope = "https://www.googleapis.com/auth/cloud-platform"
    /// The longest life Google gives an access token; `--token-lifetime` shortens it for tests of refresh.
    static let maximumLifetime: TimeInterval = 3600
    let lifetime: TimeInterval
    /// Like the Firebase emulators, "owner" is always a valid token: what fcmctl sends with FCM_EMULATOR_HOST.
    static let ownerToken = "owner"

    /// Who a valid token speaks for: a principal, whose roles IAM checks, or nobody in particular (`owner`),
    /// who may do anything.
    enum Identity: Equatable, Sendable {
        case unrestricted
        case principal(Principal)
    }

    private var trustedKeys: [String: _RSA.Signing.PublicKey] = [:]
    /// The `project_id` of each trusted key file, for an address that names no project.
    private var trustedProjects: [String: String] = [:]
    private var refreshTokens: Set<String>
    /// `owner` (nil: unrestricted) and the `--accept-token` tokens, each standing for a principal.
    private var staticTokens: [String: Principal?]
    private var issued: [String: Issued] = [:]
    private var counter = 0
    /// Every principal the emulator was told of or issued a token to, with how it came to be known and how
    /// many tokens it got: what the admin API's principal listing shows.
    private(set) var known: [String: KnownPrincipal] = [:]
    /// Subject tokens the security token service accepts, as a workload identity pool trusts an issuer.
    let subjectTokens: Set<String>

    struct KnownPrincipal: Sendable {
        var principal: Principal
        var sources: Set<String> = []
        var tokensIssued = 0
    }

    /// `staticTokens`: each `--accept-token` token and the principal it stands for; `principals`: others known
    /// from the start (the metadata server's account), with where they come from.
    init(
        staticTokens: [(token: String, principal: Principal)] = [], refreshTokens: [String], subjectTokens: [String] = [],
        lifetime: TimeInterval = maximumLifetime, principals: [(principal: Principal, source: String)] = []
    ) {
        var tokens: [String: Principal?] = [Self.ownerToken: nil]
        for (token, principal) in staticTokens { tokens[token] = principal }
        self.staticTokens = tokens
        self.refreshTokens = Set(refreshTokens)
        self.subjectTokens = Set(subjectTokens)
        self.lifetime = min(lifetime, Self.maximumLifetime)
        for (principal, source) in staticTokens.map({ ($0.principal, "--accept-token") }) + principals {
            known[principal.member, default: KnownPrincipal(principal: principal)].sources.insert(source)
        }
    }

    /// Trusts a service account's key for the JWT-bearer grant; `project` is its key file's `project_id`.
    func trust(email: String, key: _RSA.Signing.PublicKey, project: String? = nil, source: String) {
        trustedKeys[email] = key
        if let project { trustedProjects[email] = project }
        note(.serviceAccount(email, project: project), source: source)
    }

    /// Remembers a principal for the listing.
    func note(_ principal: Principal, source: String? = nil, issued: Bool = false) {
        var entry = known[principal.member] ?? KnownPrincipal(principal: principal)
        if entry.principal.project == nil { entry.principal.project = principal.project }
        if let source { entry.sources.insert(source) }
        if issued { entry.tokensIssued += 1 }
        known[principal.member] = entry
    }

    func isValid(accessToken: String, now: Date = Date()) -> Bool {
        if staticTokens[accessToken] != nil { return true }
        guard let grant = issued[accessToken] else { return false }
        return grant.expiry > now
    }

    /// Who a valid token speaks for; nil for an unknown or expired token.
    func identity(of accessToken: String, now: Date = Date()) -> Identity? {
        if let principal = staticTokens[accessToken] { return principal.map(Identity.principal) ?? .unrestricted }
        guard let grant = issued[accessToken], grant.expiry > now else { return nil }
        return .principal(grant.principal)
    }

    /// `lifetime` may only shorten the configured one, as generateAccessToken's own `lifetime` does.
    func issue(to principal: Principal, scopes: Set<String>, now: Date = Date(), lifetime requested: TimeInterval? = nil) -> (
        token: String, expiresIn: Int
    ) {
        note(principal, issued: true)
        counter += 1
        let token = "ya29.emulator-\(counter)-" + UUID().uuidString.lowercased()
        let life = min(requested ?? lifetime, lifetime)
        issued[token] = Issued(expiry: now.addingTimeInterval(life), principal: principal, scopes: scopes)
        // One second less than the token lives, as Google's answers do: a client that trusts it never sends a
        // token in its last second.
        return (token, max(1, Int(life) - 1))
    }

    /// Seconds left of an issued token's life; nil for an unknown or expired one (static tokens never expire).
    func remainingLife(of accessToken: String, now: Date = Date()) -> Double? {
        if staticTokens[accessToken] != nil { return lifetime }
        guard let grant = issued[accessToken], grant.expiry > now else { return nil }
        return grant.expiry.timeIntervalSince(now)
    }

    /// What tokeninfo calls the token's authorized party.
    func principal(of accessToken: String) -> String? {
        if let principal = staticTokens[accessToken] { return principal?.displayName ?? "static" }
        return issued[accessToken]?.principal.displayName
    }

    /// The scopes of a valid token; nil for a static token (`owner`, `--accept-token`), which serves every API.
    func scopes(of accessToken: String) -> Set<String>? {
        staticTokens[accessToken] != nil ? nil : issued[accessToken]?.scopes
    }

    /// An `--accept-token` value: `TOKEN`, a token minted for the emulator's own service account, or
    /// `TOKEN=PRINCIPAL`, one minted for PRINCIPAL (an address, or a member such as `principalSet://…`). A
    /// token may itself end in `=` padding: only what follows the last `=` and looks like a principal is one.
    static func acceptedToken(_ text: String, projectID: String) -> (token: String, principal: Principal) {
        if let equals = text.lastIndex(of: "=") {
            let principal = String(text[text.index(after: equals)...])
            if principal.contains("@") || principal.contains("://") {
                let member = IAMPolicy.member(principal)
                return (String(text[..<equals]), Principal(member: member))
            }
        }
        return (text, .serviceAccount(ServiceAccountFiles.email(projectID: projectID)))
    }

    /// Splits a space-separated OAuth `scope` value (RFC 6749 §3.3).
    static func scopeSet(_ text: String?) -> Set<String> {
        Set((text ?? "").split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" }).map(String.init))
    }

    func expireAll() { issued.removeAll() }

    enum GrantError: Error {
        case invalidGrant(String)
        case invalidScope(String)
        case invalidRequest(String)
        case unsupportedGrantType(String)
    }

    /// Verifies a JWT-bearer assertion: signature against the trusted key of its issuer, audience, a lifetime
    /// of at most an hour around now, and a scope. Any scope gets a token, as at Google: whether it serves
    /// FCM is decided when the token is used (403 ACCESS_TOKEN_SCOPE_INSUFFICIENT, `ScopeCheck`).
    func exchange(assertion: String, tokenURL: String, now: Date = Date()) throws -> (token: String, expiresIn: Int) {
        let parts = assertion.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 3, let headerData = Base64URL.decode(parts[0]), let payloadData = Base64URL.decode(parts[1]),
            let signature = Base64URL.decode(parts[2]),
            let header = try? JSONSerialization.jsonObject(with: headerData) as? [String: Any],
            let claims = try? JSONSerialization.jsonObject(with: payloadData) as? [String: Any]
        else { throw GrantError.invalidGrant("Invalid JWT: malformed assertion.") }
        guard header["alg"] as? String == "RS256" else { throw GrantError.invalidGrant("Invalid JWT: only RS256 is accepted.") }
        guard let issuer = claims["iss"] as? String, let key = trustedKeys[issuer] else {
            throw GrantError.invalidGrant("Invalid JWT Signature.")
        }
        let signed = Data((parts[0] + "." + parts[1]).utf8)
        guard key.isValidSignature(_RSA.Signing.RSASignature(rawRepresentation: signature), for: signed, padding: .insecurePKCS1v1_5) else {
            throw GrantError.invalidGrant("Invalid JWT Signature.")
        }
        let audience = claims["aud"] as? String
        guard audience == tokenURL || audience == Self.googleTokenAudience else {
            throw GrantError.invalidGrant("Invalid JWT: Failed audience check. The right audience is \(tokenURL)")
        }
        guard let iat = (claims["iat"] as? NSNumber)?.doubleValue, let exp = (claims["exp"] as? NSNumber)?.doubleValue,
            exp > iat, exp - iat <= Self.maximumLifetime, iat <= now.timeIntervalSince1970 + 300, exp > now.timeIntervalSince1970
        else {
            throw GrantError.invalidGrant(
                "Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe. Check your iat and exp values in the JWT claim."
            )
        }
        // Without a scope (and without the target_audience of an ID-token request, which the emulator does not
        // serve) Google refuses the grant: "invalid_scope", in the words it has used since 2023
        // (google-auth-library-python#217 recorded an older "Empty or missing scope not allowed.").
        let scopes = Self.scopeSet(claims["scope"] as? String)
        guard !scopes.isEmpty else { throw GrantError.invalidScope("Invalid OAuth scope or ID token audience provided.") }
        return issue(to: .serviceAccount(issuer, project: trustedProjects[issuer]), scopes: scopes, now: now)
    }

    /// [UNCERTAIN] A refresh token carries the scopes its user consented to; the emulator's stand for what
    /// `gcloud auth application-default login` asks for, which includes cloud-platform. A `scope` field in the
    /// request narrows the token to it, as RFC 6749 §6 allows.
    static let refreshTokenScopes: Set<String> = [cloudPlatformScope]

    func exchange(refreshToken: String, clientID: String?, scope: String? = nil) throws -> (token: String, expiresIn: Int) {
        guard refreshTokens.contains(refreshToken) else { throw GrantError.invalidGrant("Bad Request") }
        guard let clientID, !clientID.isEmpty else { throw GrantError.invalidRequest("Missing required parameter: client_id") }
        let requested = Self.scopeSet(scope)
        return issue(to: Principal(member: "user:\(clientID)"), scopes: requested.isEmpty ? Self.refreshTokenScopes : requested)
    }
}

enum Base64URL {
    static func decode(_ text: String) -> Data? {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        return Data(base64Encoded: base64)
    }
}

/// Service-account key files: generated for `--service-account-out`, read for `--trust-service-account`.
enum ServiceAccountFiles {
    /// The emulator's own service account, in its project (`--project-id`): the account of the
    /// `--service-account-out` key and of a bare `--accept-token` token.
    static func email(projectID: String) -> String { "fcmctl-test@\(projectID).iam.gserviceaccount.com" }

    /// Writes a service-account JSON whose `token_uri` is this emulator, mode 0600 (it holds a private key),
    /// and returns the email and public key to trust.
    static func generate(to path: String, projectID: String, tokenURI: String) throws -> (String, _RSA.Signing.PublicKey) {
        let account = email(projectID: projectID)
        let key = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        let document: [String: Any] = [
            "type": "service_account",
            "project_id": projectID,
            "private_key_id": UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: ""),
            "private_key": key.pkcs8PEMRepresentation + "\n",
            "client_email": account,
            "client_id": "100000000000000000001",
            "auth_uri": "https://accounts.google.com/o/oauth2/auth",
            "token_uri": tokenURI,
            "universe_domain": "googleapis.com",
        ]
        let data = try JSONSerialization.data(withJSONObject: document, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
        FileManager.default.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o600])
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        try handle.truncate(atOffset: 0)
        try handle.write(contentsOf: data)
        try handle.close()
        return (account, key.publicKey)
    }

    /// Reads the email, public key and `project_id` of a service-account JSON (its private key is never kept).
    static func read(_ path: String) throws -> (String, _RSA.Signing.PublicKey, String?) {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        guard let object = try JSONSerialization.jsonObject(with: data) as? [String: Any],
            let email = object["client_email"] as? String, let pem = object["private_key"] as? String
        else { throw EmulatorSetupError("\(path): not a service-account key file (needs client_email and private_key)") }
        return (email, try _RSA.Signing.PrivateKey(pemRepresentation: pem).publicKey, object["project_id"] as? String)
    }
}

struct EmulatorSetupError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
