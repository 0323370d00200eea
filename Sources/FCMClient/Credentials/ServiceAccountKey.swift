import Crypto
import Foundation
import _CryptoExtras

/// A service-account key file's fields. The private key is held only as a signing key, never as text,
/// and no description of this type includes it.
package struct ServiceAccountKey: Sendable, CustomStringConvertible {
    package let path: String
    package let clientEmail: String
    package let projectID: String?
    package let tokenURI: String
    package let keyID: String?
    let privateKey: _RSA.Signing.PrivateKey
    /// What the token is for: fcmctl's own scopes, or IAM's when the key is the source of an impersonation.
    let scope: String

    package static let googleTokenURI = "https://oauth2.googleapis.com/token"
    /// FCM, and the bucket the gcs state backend keeps the state in.
    package static let scope = "https://www.googleapis.com/auth/firebase.messaging https://www.googleapis.com/auth/devstorage.read_write"

    package init(path: String) throws {
        try self.init(path: path, object: CredentialFile.read(path))
    }

    /// `path` names where the fields came from, in messages: a key file, or the file that embeds it.
    package init(path: String, object: [String: Any], scope: String = ServiceAccountKey.scope) throws {
        self.path = path
        self.scope = scope
        guard let email = object["client_email"] as? String, !email.isEmpty else {
            throw CredentialError("\(path): the service-account key file has no client_email")
        }
        guard let pem = object["private_key"] as? String else {
            throw CredentialError("\(path): the service-account key file has no private_key")
        }
        do {
            privateKey = try _RSA.Signing.PrivateKey(pemRepresentation: pem)
        } catch {
            // The key's text must not leak into the message.
            throw CredentialError("\(path): private_key is not a valid PEM RSA key; download a new key for \(email)")
        }
        clientEmail = email
        projectID = object["project_id"] as? String
        tokenURI = object["token_uri"] as? String ?? Self.googleTokenURI
        keyID = object["private_key_id"] as? String
    }

    package var description: String { "ServiceAccountKey(\(clientEmail), \(path))" }

    /// The JWT-bearer assertion: RS256 over `header.claims`, valid for an hour (the most Google allows).
    package func assertion(now: Date, lifetime: TimeInterval = 3600) throws -> String {
        var header: [String: Any] = ["alg": "RS256", "typ": "JWT"]
        if let keyID { header["kid"] = keyID }
        let issuedAt = Int(now.timeIntervalSince1970)
        let claims: [String: Any] = [
            "iss": clientEmail, "scope": scope, "aud": tokenURI, "iat": issuedAt, "exp": issuedAt + Int(lifetime),
        ]
        let signingInput =
            try Base64URL.encode(JSONSerialization.data(withJSONObject: header, options: [.sortedKeys]))
            + "." + Base64URL.encode(JSONSerialization.data(withJSONObject: claims, options: [.sortedKeys, .withoutEscapingSlashes]))
        let signature = try privateKey.signature(for: Data(signingInput.utf8), padding: .insecurePKCS1v1_5)
        return signingInput + "." + Base64URL.encode(signature.rawRepresentation)
    }
}

package enum Base64URL {
    package static func encode(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}

/// An `authorized_user` file (what `gcloud auth application-default login` writes).
package struct AuthorizedUser: Sendable, CustomStringConvertible {
    package let path: String
    let clientID: String
    let clientSecret: String
    let refreshToken: String
    package let tokenURI: String

    package init(path: String) throws {
        try self.init(path: path, object: CredentialFile.read(path))
    }

    package init(path: String, object: [String: Any]) throws {
        self.path = path
        guard let clientID = object["client_id"] as? String, let secret = object["client_secret"] as? String,
            let refresh = object["refresh_token"] as? String
        else { throw CredentialError("\(path): authorized_user credentials need client_id, client_secret and refresh_token") }
        self.clientID = clientID
        clientSecret = secret
        refreshToken = refresh
        tokenURI = object["token_uri"] as? String ?? ServiceAccountKey.googleTokenURI
    }

    package var description: String { "AuthorizedUser(\(path))" }

    var form: [(String, String)] {
        [("grant_type", "refresh_token"), ("client_id", clientID), ("client_secret", clientSecret), ("refresh_token", refreshToken)]
    }
}
