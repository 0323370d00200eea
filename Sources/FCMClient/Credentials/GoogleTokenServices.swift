import FCMCore
import Foundation

/// Google's token services beyond the OAuth endpoint: the Security Token Service's exchange (RFC 8693)
/// and IAM Credentials' generateAccessToken, with the constants google-auth sends them.
enum GoogleTokenServices {
    static let tokenExchangeGrant = "urn:ietf:params:oauth:grant-type:token-exchange"
    static let accessTokenType = "urn:ietf:params:oauth:token-type:access_token"
    static let iamScope = "https://www.googleapis.com/auth/iam"
    /// The scopes fcmctl asks for: FCM, and the bucket the gcs state backend keeps the state in.
    static let scopes = ServiceAccountKey.scope.split(separator: " ").map(String.init)

    /// STS clients with a client id authenticate with HTTP basic authentication (RFC 6749 §2.3.1).
    static func basicAuth(_ clientID: String?, _ clientSecret: String?) -> [(String, String)] {
        guard let clientID, !clientID.isEmpty else { return [] }
        let pair = Data("\(clientID):\(clientSecret ?? "")".utf8).base64EncodedString()
        return [("Authorization", "Basic \(pair)")]
    }

    /// `POST …/serviceAccounts/EMAIL:generateAccessToken` with the source token; the answer's expireTime
    /// (RFC 3339) becomes a lifetime against the clock.
    static func generateAccessToken(
        _ url: String, sourceToken: String, scopes: [String], delegates: [String], lifetimeSeconds: Int?, transport: any HTTPTransport,
        clock: any RunClock, what: String
    ) async throws -> (token: String, expiresIn: Double) {
        var body: [String: Any] = ["scope": scopes, "lifetime": "\(lifetimeSeconds ?? 3600)s"]
        if !delegates.isEmpty { body["delegates"] = delegates }
        var request = HTTPRequest(
            method: "POST", url: url, headers: [("Content-Type", "application/json"), ("Authorization", "Bearer \(sourceToken)")],
            body: try JSONSerialization.data(withJSONObject: body, options: [.sortedKeys, .withoutEscapingSlashes]))
        request.maximumResponseBytes = CredentialLimits.answerBytes
        let response: HTTPResponse
        do {
            response = try await transport.send(request)
        } catch {
            throw CredentialError("no answer from IAM Credentials at \(url) for \(what): \(error)")
        }
        let object = (try? JSONSerialization.jsonObject(with: response.body) as? [String: Any]) ?? [:]
        guard response.status == 200, let token = object["accessToken"] as? String, !token.isEmpty,
            let expireText = object["expireTime"] as? String, let expiry = parseTime(expireText)
        else {
            let error = object["error"] as? [String: Any]
            let status = error?["status"] as? String ?? "HTTP \(response.status)"
            let message = (error?["message"] as? String).map { ": \(ConsoleText.oneLine($0))" } ?? ""
            var advice = ""
            if response.status == 403 {
                advice = "; the signed-in principal needs roles/iam.serviceAccountTokenCreator on the service account"
            } else if response.status == 200 {
                advice = "; the answer lacked accessToken or expireTime"
            }
            throw CredentialError("IAM Credentials refused to impersonate for \(what): \(status)\(message)\(advice)")
        }
        try OAuthExchange.checkSize(token, from: "IAM Credentials at \(url) (for \(what))")
        return (token, expiry.timeIntervalSince(clock.wallTime()))
    }

    static func parseTime(_ text: String) -> Date? {
        let plain = ISO8601DateFormatter()
        if let date = plain.date(from: text) { return date }
        let fractional = ISO8601DateFormatter()
        fractional.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return fractional.date(from: text)
    }
}
