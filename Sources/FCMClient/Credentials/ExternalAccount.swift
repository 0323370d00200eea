import FCMCore
import Foundation

/// An `external_account` file: workload identity federation (AIP-4117). A subject token from a file or a
/// URL is exchanged at Google's Security Token Service; when the file names a service account to
/// impersonate, the federated token then buys that account's token from IAM Credentials. The field names
/// are google-auth's (`identity_pool.py`, `external_account.py`).
package struct ExternalAccount: Sendable {
    enum SubjectFormat: Sendable, Equatable {
        case text
        case json(field: String)
    }

    enum SubjectSource: Sendable, Equatable {
        case file(String)
        /// google-github-actions/auth names GitHub's OIDC endpoint with an Authorization header.
        case url(String, headers: [String: String])
    }

    package let path: String
    let audience: String
    let subjectTokenType: String
    let tokenURL: String
    let source: SubjectSource
    let format: SubjectFormat
    let impersonationURL: String?
    let impersonationLifetimeSeconds: Int?
    let clientID: String?
    let clientSecret: String?
    let workforcePoolUserProject: String?
    package let quotaProject: String?

    static let type = "external_account"

    package init(path: String, object: [String: Any]) throws {
        self.path = path
        audience = try CredentialFile.string(object, "audience", in: path, type: Self.type)
        subjectTokenType = try CredentialFile.string(object, "subject_token_type", in: path, type: Self.type)
        tokenURL = try CredentialFile.string(object, "token_url", in: path, type: Self.type)
        guard let credentialSource = object["credential_source"] as? [String: Any] else {
            throw CredentialError("\(path): external_account credentials need a credential_source object")
        }
        if credentialSource["environment_id"] != nil || credentialSource["executable"] != nil {
            throw CredentialError(
                "\(path): this external_account takes its subject token from "
                    + (credentialSource["executable"] != nil ? "an executable" : "a cloud environment (environment_id)")
                    + ", which fcmctl does not support; it reads credential_source of kind file or url")
        }
        if let file = credentialSource["file"] as? String, !file.isEmpty {
            source = .file(file)
        } else if let url = credentialSource["url"] as? String, !url.isEmpty {
            guard (credentialSource["headers"] ?? [String: String]()) is [String: String] else {
                throw CredentialError("\(path): credential_source.headers must map header names to strings")
            }
            source = .url(url, headers: credentialSource["headers"] as? [String: String] ?? [:])
        } else {
            throw CredentialError("\(path): credential_source needs a file or a url (fcmctl supports those two kinds)")
        }
        let format = credentialSource["format"] as? [String: Any] ?? [:]
        switch format["type"] as? String ?? "text" {
        case "text": self.format = .text
        case "json":
            guard let field = format["subject_token_field_name"] as? String, !field.isEmpty else {
                throw CredentialError("\(path): credential_source.format of type json needs subject_token_field_name")
            }
            self.format = .json(field: field)
        case let other:
            throw CredentialError("\(path): credential_source.format.type '\(other)' is not text or json")
        }
        impersonationURL = (object["service_account_impersonation_url"] as? String).flatMap { $0.isEmpty ? nil : $0 }
        let impersonation = object["service_account_impersonation"] as? [String: Any]
        impersonationLifetimeSeconds = (impersonation?["token_lifetime_seconds"] as? NSNumber)?.intValue
        clientID = object["client_id"] as? String
        clientSecret = object["client_secret"] as? String
        workforcePoolUserProject = object["workforce_pool_user_project"] as? String
        quotaProject = CredentialFile.quotaProject(object)
    }

    /// The subject token, read anew for every exchange: CI runners rewrite the file, and GitHub's OIDC
    /// tokens are single-use per audience request.
    func subjectToken(transport: any HTTPTransport) async throws -> String {
        let raw: Data
        let origin: String
        switch source {
        case .file(let file):
            origin = "the subject token file \(file)"
            switch BoundedFile.contents(of: file, limit: CredentialLimits.fileBytes) {
            case .success(let data): raw = data
            case .failure(.unreadable):
                throw CredentialError("\(path): cannot read \(origin) named by credential_source.file")
            case .failure(.tooLarge(let size)):
                throw CredentialError(
                    "\(path): \(origin) named by credential_source.file \(BoundedFile.tooLargeText(size, limit: CredentialLimits.fileBytes)) "
                        + "(a subject token is a few KB); check that credential_source.file names the token file")
            }
        case .url(let url, let headers):
            origin = "the subject token URL \(Redact.url(url))"
            // Only the file's own headers go there: it is the identity provider's endpoint (GitHub's, say), not Google's.
            var request = HTTPRequest(method: "GET", url: url, headers: headers.sorted { $0.key < $1.key })
            request.maximumResponseBytes = CredentialLimits.answerBytes
            let response: HTTPResponse
            do {
                response = try await transport.send(request)
            } catch {
                throw CredentialError("\(path): no answer from \(origin): \(error)")
            }
            guard response.status == 200 else { throw CredentialError("\(path): \(origin) answered HTTP \(response.status)") }
            raw = response.body
        }
        let token: String
        switch format {
        case .text:
            token = String(decoding: raw, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            guard !token.isEmpty else { throw CredentialError("\(path): \(origin) is empty") }
        case .json(let field):
            guard let object = try? JSONSerialization.jsonObject(with: raw) as? [String: Any] else {
                throw CredentialError("\(path): \(origin) is not a JSON object (credential_source.format.type is json)")
            }
            guard let value = object[field] as? String, !value.isEmpty else {
                throw CredentialError("\(path): \(origin) has no string field '\(field)' (subject_token_field_name)")
            }
            token = value
        }
        let size = token.utf8.count
        guard size <= CredentialLimits.subjectTokenBytes else {
            throw CredentialError(
                "\(path): \(origin) holds a subject token of \(size) bytes, over the "
                    + "\(CredentialLimits.describe(CredentialLimits.subjectTokenBytes)) fcmctl sends (an OIDC token is a few KB)")
        }
        return token
    }

    /// The form google-auth's STS client sends (`sts.py`): empty fields left out. When a service account is to
    /// be impersonated, the federated token only needs to call IAM, so it asks for IAM's scope, as google-auth
    /// does by rescoping its source credentials.
    func exchangeForm(subjectToken: String, scopes: [String]) -> [(String, String)] {
        var form: [(String, String)] = [
            ("grant_type", GoogleTokenServices.tokenExchangeGrant),
            ("audience", audience),
            ("scope", (impersonationURL == nil ? scopes : [GoogleTokenServices.iamScope]).joined(separator: " ")),
            ("requested_token_type", GoogleTokenServices.accessTokenType),
            ("subject_token", subjectToken),
            ("subject_token_type", subjectTokenType),
        ]
        if let project = workforcePoolUserProject, !project.isEmpty, clientID == nil {
            let options = (try? JSONSerialization.data(withJSONObject: ["userProject": project], options: [.sortedKeys])) ?? Data()
            form.append(("options", String(decoding: options, as: UTF8.self)))
        }
        return form
    }

    func token(scopes: [String], transport: any HTTPTransport, clock: any RunClock) async throws -> (token: String, expiresIn: Double) {
        let subject = try await subjectToken(transport: transport)
        let federated = try await OAuthExchange.post(
            tokenURL, form: exchangeForm(subjectToken: subject, scopes: scopes), headers: GoogleTokenServices.basicAuth(clientID, clientSecret),
            transport: transport, what: "the external_account credentials \(path) (security token exchange)")
        guard let impersonationURL else { return federated }
        return try await GoogleTokenServices.generateAccessToken(
            impersonationURL, sourceToken: federated.token, scopes: scopes, delegates: [], lifetimeSeconds: impersonationLifetimeSeconds,
            transport: transport, clock: clock, what: "the external_account credentials \(path)")
    }
}

/// An `external_account_authorized_user` file: a workforce identity federation user's refresh token,
/// refreshed at STS's oauthtoken endpoint with the client's basic authentication (google-auth
/// `external_account_authorized_user.py`).
package struct ExternalAccountAuthorizedUser: Sendable {
    package let path: String
    let tokenURL: String
    let refreshToken: String
    let clientID: String?
    let clientSecret: String?
    package let quotaProject: String?

    package init(path: String, object: [String: Any]) throws {
        self.path = path
        let type = "external_account_authorized_user"
        tokenURL = try CredentialFile.string(object, "token_url", in: path, type: type)
        refreshToken = try CredentialFile.string(object, "refresh_token", in: path, type: type)
        clientID = object["client_id"] as? String
        clientSecret = object["client_secret"] as? String
        quotaProject = CredentialFile.quotaProject(object)
    }

    func token(transport: any HTTPTransport) async throws -> (token: String, expiresIn: Double) {
        try await OAuthExchange.post(
            tokenURL, form: [("grant_type", "refresh_token"), ("refresh_token", refreshToken)],
            headers: GoogleTokenServices.basicAuth(clientID, clientSecret), transport: transport,
            what: "the external_account_authorized_user credentials \(path)")
    }
}

enum Redact {
    /// A URL without its query, which may carry a request token.
    static func url(_ url: String) -> String {
        guard let query = url.firstIndex(of: "?") else { return url }
        return String(url[..<query]) + "?…"
    }
}
