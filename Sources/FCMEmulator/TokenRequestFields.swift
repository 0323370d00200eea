import Crypto
import Foundation

/// The fields of a security-token-service or generateAccessToken request, as the request log keeps them:
/// every field by name, secrets only as a digest, so a test can check that two clients sent the same
/// exchange without the log holding a usable token.
enum TokenRequestFields {
    static let secret: Set<String> = ["subject_token", "refresh_token", "client_secret", "assertion"]

    static func logged(_ request: EmulatorRequest, endpoint: Endpoint?) -> [String: String]? {
        switch endpoint {
        case .stsToken:
            var fields = TokenRoutes.parseForm(request.body)
            for name in secret where fields[name] != nil { fields[name] = digest(fields[name]!) }
            return fields
        case .iamGenerateAccessToken:
            guard let body = request.jsonObject else { return ["body": "not JSON"] }
            var fields: [String: String] = [:]
            for (name, value) in body {
                if let list = value as? [String] {
                    fields[name] = list.joined(separator: " ")
                } else if value is NSNull {
                    fields[name] = "null"
                } else {
                    fields[name] = "\(value)"
                }
            }
            return fields
        default:
            return nil
        }
    }

    static func digest(_ value: String) -> String {
        "sha256:" + SHA256.hash(data: Data(value.utf8)).prefix(8).map { String(format: "%02x", $0) }.joined()
    }
}
