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
    /// An `external_account` file (Workload Identity Federation, what google-github-actions/auth writes):
    /// a subject token exchanged at STS, then optionally a service account impersonated.
    case externalAccount(path: String)
    /// An `external_account_authorized_user` file (workforce identity federation, gcloud auth login
    /// --login-config): a refresh token exchanged at STS.
    case externalAccountAuthorizedUser(path: String)
    /// An `impersonated_service_account` file (gcloud auth application-default login
    /// --impersonate-service-account): source credentials, then IAM Credentials generateAccessToken.
    case impersonatedServiceAccount(path: String)
    /// The GCE metadata server.
    case metadataServer(host: String)

    /// For `--verbose` and errors: never includes secrets.
    package var summary: String {
        switch self {
        case .emulator(let host): "the FCM emulator at \(host) (FCM_EMULATOR_HOST), no credentials"
        case .accessToken: "the access token in FCM_ACCESS_TOKEN"
        case .serviceAccount(let path): "service-account key \(path)"
        case .authorizedUser(let path): "authorized-user credentials \(path)"
        case .externalAccount(let path): "external-account credentials \(path) (workload identity federation)"
        case .externalAccountAuthorizedUser(let path): "external-account authorized-user credentials \(path)"
        case .impersonatedServiceAccount(let path): "impersonated service-account credentials \(path)"
        case .metadataServer(let host): "the metadata server at \(host)"
        }
    }

    /// The credentials file this source reads, if any.
    package var path: String? {
        switch self {
        case .serviceAccount(let path), .authorizedUser(let path), .externalAccount(let path), .externalAccountAuthorizedUser(let path),
            .impersonatedServiceAccount(let path):
            path
        case .emulator, .accessToken, .metadataServer: nil
        }
    }
}

package struct CredentialError: Error, Sendable, CustomStringConvertible {
    package var description: String
    package init(_ description: String) { self.description = description }
}

package enum CredentialResolver {
    static let defaultMetadataHost = "metadata.google.internal"
    /// The types fcmctl reads, in the words google-auth uses for them.
    static let supportedTypes = [
        "service_account", "authorized_user", "external_account", "external_account_authorized_user", "impersonated_service_account",
    ]

    /// The first source that applies. Environment, file system and the metadata ping are injected for tests.
    package static func resolve(
        environment: [String: String], fileExists: (String) -> Bool = { FileManager.default.fileExists(atPath: $0) },
        readFile: (String) throws -> String? = { try CredentialFile.text($0) },
        metadataAnswers: (String) -> Bool = { MetadataProbe.answers(host: $0) }
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
        // On Compute Engine the DMI names Google; Cloud Run and GKE sandboxes hide it, so as google-auth does,
        // a short ping asks the metadata server itself. The ping goes to its DNS name (or GCE_METADATA_IP), so
        // off Google Cloud it ends at a failed name lookup and never reaches a link-local address.
        if (try? readFile("/sys/class/dmi/id/product_name"))??.contains("Google") == true {
            return .metadataServer(host: defaultMetadataHost)
        }
        if environment["NO_GCE_CHECK"]?.lowercased() != "true" {
            let host = environment["GCE_METADATA_IP"].flatMap { $0.isEmpty ? nil : $0 } ?? defaultMetadataHost
            if metadataAnswers(host) { return .metadataServer(host: host) }
        }
        throw CredentialError(
            "no credentials found. Tried, in order: FCM_EMULATOR_HOST, FCM_ACCESS_TOKEN, GOOGLE_APPLICATION_CREDENTIALS, "
                + "the gcloud ADC file (\(gcloud ?? "~/.config/gcloud/application_default_credentials.json")), GCE_METADATA_HOST, "
                + "the metadata server. Set GOOGLE_APPLICATION_CREDENTIALS to a credentials file (a service-account key, or the "
                + "external_account file google-github-actions/auth writes), or FCM_EMULATOR_HOST=127.0.0.1:PORT for fcm-emulator")
    }

    static func gcloudADCPath(_ environment: [String: String]) -> String? {
        if let config = environment["CLOUDSDK_CONFIG"], !config.isEmpty {
            return (config as NSString).appendingPathComponent("application_default_credentials.json")
        }
        guard let home = environment["HOME"], !home.isEmpty else { return nil }
        return (home as NSString).appendingPathComponent(".config/gcloud/application_default_credentials.json")
    }

    static func keyFileSource(_ path: String, readFile: (String) throws -> String?) throws -> CredentialSource {
        let object = try CredentialFile.object(path, text: readFile(path))
        switch object["type"] as? String {
        case "service_account": return .serviceAccount(path: path)
        case "authorized_user": return .authorizedUser(path: path)
        case "external_account": return .externalAccount(path: path)
        case "external_account_authorized_user": return .externalAccountAuthorizedUser(path: path)
        case "impersonated_service_account": return .impersonatedServiceAccount(path: path)
        case let other:
            throw CredentialError(
                "\(path): credentials of type '\(other ?? "none")' are not supported; fcmctl reads "
                    + supportedTypes.joined(separator: ", "))
        }
    }
}

/// Reading a credentials file into its JSON object, with errors that name the file and never its content.
package enum CredentialFile {
    static func object(_ path: String, text: String?) throws -> [String: Any] {
        guard let text else { throw CredentialError("\(path): cannot read the credentials file") }
        guard let data = text.data(using: .utf8), let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw CredentialError("\(path): not a JSON credentials file (expected an object with a \"type\" field)")
        }
        return object
    }

    package static func read(_ path: String) throws -> [String: Any] {
        try object(path, text: try text(path))
    }

    /// The file's text, nil when it cannot be read; one over `CredentialLimits.fileBytes` is refused unread.
    package static func text(_ path: String) throws -> String? {
        switch BoundedFile.contents(of: path, limit: CredentialLimits.fileBytes) {
        case .success(let data): return String(data: data, encoding: .utf8)
        case .failure(.unreadable): return nil
        case .failure(.tooLarge(let size)):
            throw CredentialError(
                "\(path): the credentials file \(BoundedFile.tooLargeText(size, limit: CredentialLimits.fileBytes)) (a key or "
                    + "external_account file is a few KB); check that GOOGLE_APPLICATION_CREDENTIALS names the credentials file")
        }
    }

    static func string(_ object: [String: Any], _ field: String, in path: String, type: String) throws -> String {
        guard let value = object[field] as? String, !value.isEmpty else {
            throw CredentialError("\(path): \(type) credentials need the field \(field)")
        }
        return value
    }

    /// `quota_project_id`, which Google bills and checks quota against instead of the credentials' own project.
    static func quotaProject(_ object: [String: Any]) -> String? {
        (object["quota_project_id"] as? String).flatMap { $0.isEmpty ? nil : $0 }
    }
}
