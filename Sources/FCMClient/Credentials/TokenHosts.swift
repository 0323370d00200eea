import CCurl
import Foundation

/// Where a credentials file may send what buys a token: `token_url` receives the subject token (or a
/// refresh token), `service_account_impersonation_url` the federated token. Either, pointed elsewhere by a
/// file fcmctl did not write, would hand them to that host, so both must be HTTPS on one of Google's hosts for
/// the service, unless they are loopback (fcm-emulator, any scheme) or a host `FCMCTL_ALLOW_TOKEN_HOSTS` names
/// (over HTTPS). Checked when the credentials are read, before anything is sent.
///
/// Google's hosts are the ones google-auth accepted while it checked these fields (google-auth 2.15,
/// `external_account.py` `validate_token_url` and `validate_service_account_impersonation_url`): SERVICE, X.SERVICE,
/// SERVICE.X, X-SERVICE and the private SERVICE-X.p under googleapis.com, with mTLS variants for STS; plus the
/// regional SERVICE.REGION.rep.googleapis.com (google-auth `credentials.py` `_is_regional_endpoint`). google-auth
/// dropped the check in 2023 (googleapis/google-auth-library-python#1220) for Trusted Partner Cloud universes,
/// which are not googleapis.com: those are what the variable is for.
package struct TokenHosts: Sendable {
    package enum Service: Sendable {
        /// Google's Security Token Service (`sts.googleapis.com`): token_url.
        case securityTokenService
        /// IAM Credentials (`iamcredentials.googleapis.com`): service_account_impersonation_url.
        case iamCredentials
        /// Google's OAuth 2.0 token endpoint (`oauth2.googleapis.com`, and `accounts.google.com` that older keys
        /// name): a service-account key's `token_uri` receives a signed assertion, an authorized_user's its
        /// refresh token and client secret.
        case oauth2

        var label: String {
            switch self {
            case .securityTokenService: "sts"
            case .iamCredentials: "iamcredentials"
            case .oauth2: "oauth2"
            }
        }

        var name: String {
            switch self {
            case .securityTokenService: "Google's security token service"
            case .iamCredentials: "Google's IAM Credentials API"
            case .oauth2: "Google's OAuth 2.0 token endpoint"
            }
        }
    }

    package static let variable = "FCMCTL_ALLOW_TOKEN_HOSTS"
    /// Lower-cased host names (and ports, if given) from `FCMCTL_ALLOW_TOKEN_HOSTS`.
    let allowed: Set<String>

    package init(environment: [String: String]) {
        let listed = (environment[Self.variable] ?? "").split { $0 == "," || $0 == " " || $0 == "\t" || $0 == "\n" }
        allowed = Set(listed.map { $0.lowercased() })
    }

    /// Throws, naming the file, the field and the host (never the rest of the URL), unless `url` may be sent to.
    package func check(_ url: String, field: String, service: Service, in path: String) throws {
        guard let parts = Self.parse(url) else {
            throw CredentialError("\(path): \(field) is not a URL (expected https://\(service.label).googleapis.com/…)")
        }
        if Self.isLoopback(parts.host) { return }
        let google = Self.isGoogleHost(parts.host, service: service)
        let listed = allowed.contains(parts.host) || parts.port.map { allowed.contains("\(parts.host):\($0)") } == true
        if google || listed {
            guard parts.scheme == "https" else {
                throw CredentialError(
                    "\(path): \(field) names \(parts.scheme)://\(parts.host), not HTTPS; the token would cross the network in the clear. "
                        + "Nothing was sent: use https://\(parts.host)")
            }
            return
        }
        throw CredentialError(
            "\(path): \(field) names the host \(parts.host), which is not \(service.name) (https://\(service.label).googleapis.com or "
                + "its regional and private endpoints) nor loopback. Nothing was sent. If this host is meant to receive the token "
                + "(another Google Cloud universe, a test double), allow it with \(Self.variable)=\(parts.host)")
    }

    /// Scheme and host as curl, which makes the request, reads them: no second parser to disagree with it.
    static func parse(_ url: String) -> (scheme: String, host: String, port: String?)? {
        guard let handle = curl_url() else { return nil }
        defer { curl_url_cleanup(handle) }
        guard curl_url_set(handle, CURLUPART_URL, url, 0) == CURLUE_OK else { return nil }
        func part(_ which: CURLUPart) -> String? {
            var text: UnsafeMutablePointer<CChar>?
            guard curl_url_get(handle, which, &text, 0) == CURLUE_OK, let text else { return nil }
            defer { curl_free(text) }
            return String(cString: text).lowercased()
        }
        guard let scheme = part(CURLUPART_SCHEME), let host = part(CURLUPART_HOST), !host.isEmpty else { return nil }
        return (scheme, host, part(CURLUPART_PORT))
    }

    static func isLoopback(_ host: String) -> Bool {
        if host == "localhost" || host == "[::1]" || host == "::1" { return true }
        let octets = host.split(separator: ".", omittingEmptySubsequences: false)
        return octets.count == 4 && octets[0] == "127" && octets.allSatisfy { UInt8($0) != nil }
    }

    static func isGoogleHost(_ host: String, service: Service) -> Bool {
        if service == .oauth2 { return host == "oauth2.googleapis.com" || host == "accounts.google.com" }
        let suffix = ".googleapis.com"
        guard host.hasSuffix(suffix) else { return false }
        var labels = host.dropLast(suffix.count).split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard !labels.contains(where: \.isEmpty) else { return false }
        let name = service.label
        if service == .securityTokenService, labels.count > 1, labels.last == "mtls" { labels.removeLast() }
        switch labels.count {
        case 1:
            let only = labels[0]
            return only == name || (only.hasSuffix("-" + name) && only.count > name.count + 1)
        case 2:
            if labels[1] == name || labels[0] == name { return true }
            return labels[1] == "p" && labels[0].hasPrefix(name + "-") && labels[0].count > name.count + 1
        case 3:
            return labels[0] == name && labels[2] == "rep"
        default:
            return false
        }
    }
}
