import FCMCore
import Foundation

/// A token that never changes: the emulator's "owner" or FCM_ACCESS_TOKEN.
package struct StaticTokenProvider: AccessTokenProvider {
    let value: String
    package let quotaProject: String?

    package init(_ value: String, quotaProject: String? = nil) {
        self.value = value
        self.quotaProject = quotaProject
    }

    package func token() async throws -> String { value }
    package func invalidate(_ token: String) async {}
}

/// How to obtain a fresh token: one network exchange, returning the token and its lifetime in seconds.
package typealias TokenFetch = @Sendable () async throws -> (token: String, expiresIn: Double)

/// Caches a token and refreshes it before it expires. Concurrent callers during a refresh all wait for
/// the same one: at fleet scale hundreds of requests are in flight when a token runs out.
package actor CachedTokenProvider: AccessTokenProvider {
    private let fetch: TokenFetch
    private let clock: any RunClock
    package nonisolated let quotaProject: String?
    private var current: (token: String, refreshAt: Double)?
    private var inFlight: Task<(token: String, expiresIn: Double), any Error>?
    package private(set) var fetches = 0

    /// Refreshed this long before expiry, so no request is sent with a token about to lapse.
    static let margin = 300.0

    package init(clock: any RunClock = SystemClock(), quotaProject: String? = nil, fetch: @escaping TokenFetch) {
        self.fetch = fetch
        self.clock = clock
        self.quotaProject = quotaProject
    }

    package func token() async throws -> String {
        if let current, clock.now() < current.refreshAt { return current.token }
        if let inFlight { return try await inFlight.value.token }
        let task = Task { try await fetch() }
        inFlight = task
        fetches += 1
        defer { inFlight = nil }
        let fresh = try await task.value
        current = (fresh.token, clock.now() + max(0, fresh.expiresIn - min(Self.margin, fresh.expiresIn / 2)))
        return fresh.token
    }

    package func invalidate(_ token: String) {
        if current?.token == token { current = nil }
    }
}

/// Turns a credential source into a token provider, talking to token endpoints over `transport`. Every
/// provider but a static token refreshes before expiry, so a run longer than a token's life (a million
/// changes, or the emulator's five-second tokens) never sends an expired one.
package enum TokenProviderFactory {
    package static func make(
        _ source: CredentialSource, environment: [String: String], transport: any HTTPTransport,
        clock: any RunClock = SystemClock()
    ) throws -> any AccessTokenProvider {
        let scopes = GoogleTokenServices.scopes
        let hosts = TokenHosts(environment: environment)
        // GOOGLE_CLOUD_QUOTA_PROJECT wins over the file's quota_project_id, as in google-auth.
        let quotaOverride = environment["GOOGLE_CLOUD_QUOTA_PROJECT"].flatMap { $0.isEmpty ? nil : $0 }
        func cached(_ quotaProject: String?, _ fetch: @escaping TokenFetch) -> CachedTokenProvider {
            CachedTokenProvider(clock: clock, quotaProject: quotaOverride ?? quotaProject, fetch: fetch)
        }
        switch source {
        case .emulator:
            return StaticTokenProvider("owner")
        case .accessToken:
            let token = environment["FCM_ACCESS_TOKEN"] ?? ""
            try OAuthExchange.checkSize(token, from: "FCM_ACCESS_TOKEN")
            return StaticTokenProvider(token, quotaProject: quotaOverride)
        case .serviceAccount(let path):
            let object = try CredentialFile.read(path)
            let key = try ServiceAccountKey(path: path, object: object)
            try hosts.check(key.tokenURI, field: "token_uri", service: .oauth2, in: path)
            return cached(CredentialFile.quotaProject(object)) {
                try await OAuthExchange.post(
                    key.tokenURI, form: try OAuthExchange.jwtBearerForm(key, now: clock.wallTime()), transport: transport,
                    what: "the service-account key \(path)")
            }
        case .authorizedUser(let path):
            let object = try CredentialFile.read(path)
            let user = try AuthorizedUser(path: path, object: object)
            try hosts.check(user.tokenURI, field: "token_uri", service: .oauth2, in: path)
            return cached(CredentialFile.quotaProject(object)) {
                try await OAuthExchange.post(user.tokenURI, form: user.form, transport: transport, what: "the authorized_user credentials \(path)")
            }
        case .externalAccount(let path):
            let account = try ExternalAccount(path: path, object: CredentialFile.read(path))
            try hosts.check(account.tokenURL, field: "token_url", service: .securityTokenService, in: path)
            if let url = account.impersonationURL {
                try hosts.check(url, field: "service_account_impersonation_url", service: .iamCredentials, in: path)
            }
            return cached(account.quotaProject) { try await account.token(scopes: scopes, transport: transport, clock: clock) }
        case .externalAccountAuthorizedUser(let path):
            let user = try ExternalAccountAuthorizedUser(path: path, object: CredentialFile.read(path))
            try hosts.check(user.tokenURL, field: "token_url", service: .securityTokenService, in: path)
            return cached(user.quotaProject) { try await user.token(transport: transport) }
        case .impersonatedServiceAccount(let path):
            let account = try ImpersonatedServiceAccount(path: path, object: CredentialFile.read(path))
            try hosts.check(account.impersonationURL, field: "service_account_impersonation_url", service: .iamCredentials, in: path)
            try hosts.check(account.sourceTokenURI, field: "source_credentials.token_uri", service: .oauth2, in: path)
            return cached(account.quotaProject) { try await account.token(scopes: scopes, transport: transport, clock: clock) }
        case .metadataServer(let host):
            return cached(nil) { try await OAuthExchange.metadata(host: host, transport: transport) }
        }
    }
}

enum OAuthExchange {
    static func formEncode(_ fields: [(String, String)]) -> Data {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        let text = fields.map { "\($0.0)=\($0.1.addingPercentEncoding(withAllowedCharacters: allowed) ?? "")" }.joined(separator: "&")
        return Data(text.utf8)
    }

    /// A token endpoint exchange. Errors say which credentials were refused and why, in Google's words,
    /// without echoing anything secret from the request.
    static func jwtBearerForm(_ key: ServiceAccountKey, now: Date) throws -> [(String, String)] {
        [("grant_type", "urn:ietf:params:oauth:grant-type:jwt-bearer"), ("assertion", try key.assertion(now: now))]
    }

    static func post(_ url: String, form: [(String, String)], headers: [(String, String)] = [], transport: any HTTPTransport, what: String)
        async throws -> (token: String, expiresIn: Double)
    {
        var request = HTTPRequest(
            method: "POST", url: url, headers: [("Content-Type", "application/x-www-form-urlencoded")] + headers, body: formEncode(form))
        request.maximumResponseBytes = CredentialLimits.answerBytes
        let response: HTTPResponse
        do {
            response = try await transport.send(request)
        } catch {
            throw CredentialError("no answer from the token endpoint \(url) for \(what): \(error)")
        }
        let object = (try? JSONSerialization.jsonObject(with: response.body) as? [String: Any]) ?? [:]
        guard response.status == 200, let token = object["access_token"] as? String else {
            let error = object["error"] as? String ?? "HTTP \(response.status)"
            let detail = (object["error_description"] as? String).map { " (\(ConsoleText.oneLine($0)))" } ?? ""
            var advice = ""
            if error == "invalid_grant" {
                advice = ": the key or refresh token was refused; check it is current and not revoked, and that the clock is right"
            }
            if error == "invalid_scope" { advice = ": the credentials may not request the firebase.messaging scope" }
            throw CredentialError("\(url) refused \(what): \(error)\(detail)\(advice)")
        }
        try checkSize(token, from: "the token endpoint \(url) (for \(what))")
        return (token, expiresIn(object))
    }

    /// Every token becomes an `Authorization` header: one past `CredentialLimits.accessTokenBytes` is no token
    /// Google issued, and one past a megabyte made curl fail before sending, then wait for ever on the retry.
    /// The message says where it came from and how large it was, never what it holds.
    static func checkSize(_ token: String, from origin: String) throws {
        let size = token.utf8.count
        guard size > CredentialLimits.accessTokenBytes else { return }
        throw CredentialError(
            "\(origin) gave an access token of \(size) bytes, over the \(CredentialLimits.describe(CredentialLimits.accessTokenBytes)) "
                + "fcmctl sends (Google's tokens are at most 12 KB); check that the credentials point at Google's token service")
    }

    /// Some token services send expires_in as a string; google-auth reads both.
    static func expiresIn(_ object: [String: Any]) -> Double {
        if let number = object["expires_in"] as? NSNumber { return number.doubleValue }
        return (object["expires_in"] as? String).flatMap(Double.init) ?? 3600
    }

    static func metadata(host: String, transport: any HTTPTransport) async throws -> (token: String, expiresIn: Double) {
        let url = "http://\(host)/computeMetadata/v1/instance/service-accounts/default/token"
        var request = HTTPRequest(method: "GET", url: url, headers: [("Metadata-Flavor", "Google")])
        request.maximumResponseBytes = CredentialLimits.answerBytes
        let response: HTTPResponse
        do {
            response = try await transport.send(request)
        } catch {
            throw CredentialError("no answer from the metadata server at \(host): \(error)")
        }
        let object = (try? JSONSerialization.jsonObject(with: response.body) as? [String: Any]) ?? [:]
        guard response.status == 200, let token = object["access_token"] as? String else {
            throw CredentialError("the metadata server at \(host) gave no token (HTTP \(response.status))")
        }
        try checkSize(token, from: "the metadata server at \(host)")
        return (token, (object["expires_in"] as? NSNumber)?.doubleValue ?? 3600)
    }
}
