import Foundation

/// Google's Security Token Service (`POST /v1/token`, RFC 8693 token exchange) and IAM Credentials'
/// generateAccessToken, as far as their reference pages and google-auth's clients show them: what fcmctl
/// and google-auth send for `external_account` and `impersonated_service_account` credentials.
extension TokenAuthority {
    static let tokenExchangeGrant = "urn:ietf:params:oauth:grant-type:token-exchange"
    static let accessTokenType = "urn:ietf:params:oauth:token-type:access_token"
    /// The subject token types STS documents (jwt and id_token from OIDC providers such as GitHub, SAML,
    /// AWS signed requests, and access tokens for workforce pools).
    static let subjectTokenTypes: Set<String> = [
        "urn:ietf:params:oauth:token-type:jwt", "urn:ietf:params:oauth:token-type:id_token", "urn:ietf:params:oauth:token-type:saml2",
        "urn:ietf:params:aws:token-type:aws4_request", "urn:ietf:params:oauth:token-type:access_token",
    ]

    /// Checks every field STS checks, in the order a client is best told about them, and issues a federated
    /// token for the pool named by `audience`.
    func exchangeSubjectToken(_ form: [String: String], now: Date = Date()) throws -> (token: String, expiresIn: Int) {
        guard form["grant_type"] == Self.tokenExchangeGrant else {
            throw GrantError.unsupportedGrantType("Invalid grant_type: \(form["grant_type"] ?? ""); expected \(Self.tokenExchangeGrant)")
        }
        guard form["requested_token_type"] == Self.accessTokenType else {
            throw GrantError.invalidRequest("Invalid value for \"requested_token_type\": expected \(Self.accessTokenType)")
        }
        guard let audience = form["audience"], audience.hasPrefix("//iam.googleapis.com/") else {
            throw GrantError.invalidRequest(
                "Invalid value for \"audience\". This value should be the full resource name of the Identity Provider, "
                    + "starting with //iam.googleapis.com/")
        }
        guard let type = form["subject_token_type"], Self.subjectTokenTypes.contains(type) else {
            throw GrantError.invalidRequest("Invalid value for \"subject_token_type\": \(form["subject_token_type"] ?? "missing")")
        }
        let scopes = Self.scopeSet(form["scope"])
        guard !scopes.isEmpty, scopes.allSatisfy({ $0.hasPrefix("https://www.googleapis.com/auth/") }) else {
            throw GrantError.invalidScope("Invalid value for \"scope\": one or more https://www.googleapis.com/auth/ scopes are required")
        }
        guard let subject = form["subject_token"], !subject.isEmpty else {
            throw GrantError.invalidRequest("Missing required parameter: subject_token")
        }
        guard subjectTokens.contains(subject) else {
            throw GrantError.invalidGrant("The subject token is not accepted by the identity pool provider \(audience)")
        }
        return issue(to: .federated(audience: audience), scopes: scopes, now: now)
    }

    enum IAMError: Error {
        case invalidArgument(String)
        case notFound(String)
    }

    /// A service account's token for whoever holds a valid token; any address that looks like a service
    /// account's may be impersonated (IAM's roles/iam.serviceAccountTokenCreator is not modelled).
    func generateAccessToken(email: String, body: [String: Any]?, now: Date = Date()) throws -> (token: String, expireTime: String) {
        guard email.contains("@") else { throw IAMError.notFound("Not found; Gaia id not found for email \(email)") }
        guard let body else { throw IAMError.invalidArgument("Invalid JSON payload received.") }
        guard let scopes = body["scope"] as? [String], !scopes.isEmpty else { throw IAMError.invalidArgument("Scope required.") }
        if let delegates = body["delegates"], !(delegates is NSNull), !(delegates is [String]) {
            throw IAMError.invalidArgument("Invalid value at 'delegates'")
        }
        var requested = Self.maximumLifetime
        if let text = body["lifetime"] as? String {
            guard text.hasSuffix("s"), let seconds = Double(text.dropLast()), seconds > 0, seconds <= Self.maximumLifetime else {
                throw IAMError.invalidArgument("Invalid value at 'lifetime' (\(text)): between 1s and 3600s")
            }
            requested = seconds
        } else if body["lifetime"] != nil {
            throw IAMError.invalidArgument("Invalid value at 'lifetime' (type)")
        }
        let grant = issue(to: .serviceAccount(email), scopes: Set(scopes), now: now, lifetime: requested)
        let formatter = ISO8601DateFormatter()
        return (grant.token, formatter.string(from: now.addingTimeInterval(Double(grant.expiresIn + 1))))
    }
}
