import FCMClient
import FCMCore
import FCMManifest

/// Topics are addressed as `projects/ID/…`: a manifest with topics needs a project id from somewhere. The
/// rule is checked where manifests are loaded, so `validate` and `plan` agree (validate once passed a
/// manifest that plan then refused at connect time), with the same sources `plan` reads the id from.
package enum ProjectIDRule {
    package static func check(_ manifest: Manifest, environment: [String: String]) -> Diagnostic? {
        guard !manifest.topics.isEmpty, ProjectID.resolve(declared: manifest.project?.id?.value ?? "", environment: environment).isEmpty
        else { return nil }
        let first = manifest.topics.values.map(\.membersLocation).min()
        return .error(
            "topics need a project id (the topic API addresses projects/ID): set project.id in the manifest, or GOOGLE_CLOUD_PROJECT, "
                + "or use a service-account key that names one",
            at: manifest.project?.location ?? first)
    }
}
