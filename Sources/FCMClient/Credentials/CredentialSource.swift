import Foundation

/// Where fcmctl's access tokens come from, found in Application Default Credentials order with two
/// fcmctl-specific sources first (wire reference §5).
package enum CredentialSource: Sendable, Equatable {
    /// FCM_EMULATOR_HOST: the emulator's always-valid "owner" token, no real credentials.
    case emulator(host: String)
    /// FCM_ACCESS_TOKEN: a token a pipeline minted itself; used as is, never refreshed.
    case accessToken
    /// A `service_account` key file: RS256 JWT-bearer grant.
    case serviceAccount(path: String)
    /// An `authorized_user` file (gcloud auth application-default login): refresh-token grant.
    case authorizedUser(path: String)
    /// The GCE metadata server.
    case metadataServer(host: String)

    /// For `--verbose` and errors: never includes secrets.
    package var summary: String {
        switch self {
        case .emulator(let host): "the FCM emulator at \(host) (FCM_EMULATOR_HOST), no credentials"
        case .accessToken: "the access token in FCM_ACCESS_TOKEN"
        case .serviceAccount(let path): "service-account key \(path)"
        case .authorizedUser(let path): "authorized-user credentials \(path)"
        case .metadataServer(let host): "the metadata server at \(host)"
        }
    }
}

package struct CredentialError: Error, Sendable, CustomStringConvertible {
    package var description: String
    package init(_ description: String) { self.description = description }
}

package enum CredentialResolver {
    static let defaultMetadataHost = "metadata.google.internal"

    /// The first source that applies. Environment and file system are injected for tests.
    package static func resolve(
        environment: [String: String], fileExists: (String) -> Bool = { FileManager.default.fileExists(atPath: $0) },
        readFile: (String) -> String? = { try? String(contentsOfFile: $0, encoding: .utf8) }
    ) throws -> CredentialSource {
        if let host = environment["FCM_EMULATOR_HOST"], !host.isEmpty { return .emulator(host: host) }
        if let token = environment["FCM_ACCESS_TOKEN"], !token.isEmpty { return .accessToken }
        if let path = environment["GOOGLE_APPLICATION_CREDENTIALS"], !path.isEmpty {
            guard fileExists(path) else {
                throw CredentialError("GOOGLE_APPLICATION_CREDENTIALS names \(path), which does not exist")
            }
            return try keyFileSource(path, readFile: readFile)
        }
        let gcloud = gcloudADCPath(environment)
        if let gcloud, fileExists(gcloud) { return try keyFileSource(gcloud, readFile: readFile) }
        if let host = environment["GCE_METADATA_HOST"] ?? environment["GCE_METADATA_ROOT"], !host.isEmpty {
            return .metadataServer(host: host)
        }
        // Only on Google Compute Engine, detected the way google-auth does it on Linux, is the metadata
        // server tried without being named: nothing else should send requests to link-local addresses.
        if readFile("/sys/class/dmi/id/product_name")?.contains("Google") == true {
            return .metadataServer(host: defaultMetadataHost)
        }
        throw CredentialError(
            "no credentials found. Tried, in order: FCM_EMULATOR_HOST, FCM_ACCESS_TOKEN, GOOGLE_APPLICATION_CREDENTIALS, "
                + "the gcloud ADC file (\(gcloud ?? "~/.config/gcloud/application_default_credentials.json")), GCE_METADATA_HOST. "
                + "Set GOOGLE_APPLICATION_CREDENTIALS to a service-account key file, or FCM_EMULATOR_HOST=127.0.0.1:PORT for fcm-emulator")
    }

    static func gcloudADCPath(_ environment: [String: String]) -> String? {
        if let config = environment["CLOUDSDK_CONFIG"], !config.isEmpty {
            return (config as NSString).appendingPathComponent("application_default_credentials.json")
        }
        guard let home = environment["HOME"], !home.isEmpty else { return nil }
        return (home as NSString).appendingPathComponent(".config/gcloud/application_default_credentials.json")
    }

    static func keyFileSource(_ path: String, readFile: (String) -> String?) throws -> CredentialSource {
        guard let text = readFile(path), let data = text.data(using: .utf8),
            let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
        else { throw CredentialError("\(path): not a readable JSON credentials file") }
        switch object["type"] as? String {
        case "service_account": return .serviceAccount(path: path)
        case "authorized_user": return .authorizedUser(path: path)
        case let other:
            throw CredentialError(
                "\(path): credentials of type '\(other ?? "none")' are not supported; use a service_account key or authorized_user credentials")
        }
    }
}
