import Foundation

/// The one answer to "which Firebase project is this run for?" when the manifest (or `send --project`) does
/// not say: GOOGLE_CLOUD_PROJECT, then GCLOUD_PROJECT (a variable set to nothing counts as unset, as in
/// google-auth's `_get_gcloud_sdk_credentials`/`default()`), then the `project_id` of the service-account key
/// GOOGLE_APPLICATION_CREDENTIALS names. Only that one field of the key is read: the private key is neither
/// parsed nor kept. `validate`, `plan`, `apply`, `send` and the connection all ask here.
package enum ProjectID {
    package static func resolve(declared: String, environment: [String: String]) -> String {
        if !declared.isEmpty { return declared }
        for name in ["GOOGLE_CLOUD_PROJECT", "GCLOUD_PROJECT"] {
            if let value = environment[name], !value.isEmpty { return value }
        }
        guard let path = environment["GOOGLE_APPLICATION_CREDENTIALS"], !path.isEmpty else { return "" }
        return keyFileProject(path) ?? ""
    }

    /// The `project_id` of a service-account key file, or nil (not a key, unreadable, too large: the
    /// connection reports those when it signs in).
    package static func keyFileProject(_ path: String) -> String? {
        guard case .success(let data) = BoundedFile.contents(of: path, limit: CredentialLimits.fileBytes),
            let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
            object["type"] as? String == "service_account", let id = object["project_id"] as? String, !id.isEmpty
        else { return nil }
        return id
    }
}
