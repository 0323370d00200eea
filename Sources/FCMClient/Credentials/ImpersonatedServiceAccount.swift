import FCMCore
import Foundation

/// An `impersonated_service_account` file (what `gcloud auth application-default login
/// --impersonate-service-account` writes): source credentials that may act as a service account, whose
/// token IAM Credentials' generateAccessToken then issues (google-auth `impersonated_credentials.py`).
package struct ImpersonatedServiceAccount: Sendable {
    enum Source: Sendable {
        case user(AuthorizedUser)
        /// A key signs its assertion for IAM's scope: all it needs is to call generateAccessToken.
        case key(ServiceAccountKey)
    }

    package let path: String
    let impersonationURL: String
    let delegates: [String]
    let source: Source
    package let quotaProject: String?

    package init(path: String, object: [String: Any]) throws {
        self.path = path
        impersonationURL = try CredentialFile.string(object, "service_account_impersonation_url", in: path, type: "impersonated_service_account")
        guard (object["delegates"] ?? [String]()) is [String] || object["delegates"] is NSNull else {
            throw CredentialError("\(path): delegates must be a list of service-account emails")
        }
        delegates = object["delegates"] as? [String] ?? []
        guard let embedded = object["source_credentials"] as? [String: Any] else {
            throw CredentialError("\(path): impersonated_service_account credentials need a source_credentials object")
        }
        switch embedded["type"] as? String {
        case "authorized_user": source = .user(try AuthorizedUser(path: path + " (source_credentials)", object: embedded))
        case "service_account":
            source = .key(try ServiceAccountKey(path: path + " (source_credentials)", object: embedded, scope: GoogleTokenServices.iamScope))
        case let other:
            throw CredentialError(
                "\(path): source_credentials of type '\(other ?? "none")' are not supported; fcmctl impersonates from "
                    + "authorized_user or service_account credentials")
        }
        quotaProject = CredentialFile.quotaProject(object)
    }

    /// Where the source credentials buy their token.
    var sourceTokenURI: String {
        switch source {
        case .user(let user): user.tokenURI
        case .key(let key): key.tokenURI
        }
    }

    func token(scopes: [String], transport: any HTTPTransport, clock: any RunClock) async throws -> (token: String, expiresIn: Double) {
        let sourceToken: (token: String, expiresIn: Double)
        switch source {
        case .user(let user):
            sourceToken = try await OAuthExchange.post(
                user.tokenURI, form: user.form, transport: transport, what: "the source credentials of \(path)")
        case .key(let key):
            sourceToken = try await OAuthExchange.post(
                key.tokenURI, form: try OAuthExchange.jwtBearerForm(key, now: clock.wallTime()), transport: transport,
                what: "the source credentials of \(path)")
        }
        return try await GoogleTokenServices.generateAccessToken(
            impersonationURL, sourceToken: sourceToken.token, scopes: scopes, delegates: delegates, lifetimeSeconds: nil,
            transport: transport, clock: clock, what: "the impersonated_service_account credentials \(path)")
    }
}
