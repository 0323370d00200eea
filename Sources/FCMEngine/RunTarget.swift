import FCMClient
import FCMCore
import FCMManifest
import Foundation

/// What a run is about, settled before anything is read or sent: the declared state, the manifests'
/// digest, the one state location, and the project. Computed once from values, so no later step changes
/// where the state is as a side effect.
package struct RunTarget {
    package var desired: DesiredState
    /// The manifests as written: selectors, labels and excludes, which say why a plan removes what it removes.
    package var manifest: Manifest
    /// sha256 of the manifest files read: what a saved plan records and checks.
    package var manifestDigest: String
    package var statePath: String
    package var project: ProjectBinding

    /// `stateOverride` (`--state`) wins, then the manifest's `state:`, then the default of the manifests'
    /// directory, which must be one place: several `-f` whose directories differ have several defaults, and the
    /// first is not the environment's (`-f fcm/base -f fcm/prod` used fcm/base's state, shared with dev).
    package static func make(
        _ loaded: LoadedManifest, manifestPaths: [String], stateOverride: String?, allowEmpty: Bool, environment: [String: String],
        notices: Notices, namingDevices: Bool = true
    ) throws -> RunTarget {
        let desired = loaded.desiredState(namingDevices: namingDevices)
        if desired.isEmpty && !allowEmpty {
            throw EngineFailure(
                "the manifest declares no groups and no topics; fcmctl would remove everything it manages. "
                    + "Pass --allow-empty if that is what you want")
        }
        if let line = ManifestStage.deviceFileCounts(loaded.manifest) { notices(line) }
        let statePath = try StatePaths.resolve(
            override: stateOverride ?? loaded.manifest.state?.resolvedLocation, manifests: manifestPaths)
        return RunTarget(
            desired: desired, manifest: loaded.manifest, manifestDigest: loaded.digest, statePath: statePath,
            project: ProjectBinding.addressed(desired.project, environment: environment))
    }
}

/// Where a run keeps its state when nobody says.
package enum StatePaths {
    package static func resolve(override: String?, manifests: [String]) throws -> String {
        if let override { return override }
        let defaults = defaultPaths(manifests: manifests)
        guard defaults.count > 1 else { return defaults.first ?? ".fcmctl/state.json" }
        throw EngineFailure(
            "the manifests \((manifests.isEmpty ? ["."] : manifests).map { "-f \($0)" }.joined(separator: ", ")) would keep their state in "
                + "different places (\(defaults.joined(separator: ", "))), and fcmctl will not guess which is this environment's. Pass --state PATH "
                + "with this environment's state, or declare `state:` (a path, or a gcs bucket) in its manifest. Nothing was read or sent")
    }

    /// Where each manifest path would keep its state by default (`.fcmctl/state.json` in its directory),
    /// without repeats, in the order given.
    package static func defaultPaths(manifests: [String]) -> [String] {
        var seen = Set<String>()
        var paths: [String] = []
        for manifest in manifests.isEmpty ? ["."] : manifests {
            var isDirectory: ObjCBool = false
            let directory =
                FileManager.default.fileExists(atPath: manifest, isDirectory: &isDirectory) && isDirectory.boolValue
                ? manifest : PathText.directory(of: manifest)
            let path = ((directory.isEmpty ? "." : directory) as NSString).appendingPathComponent(".fcmctl/state.json")
            // `fcm/dev`, `fcm/dev/` and `./fcm/dev/a.yaml` share one state.
            if seen.insert(PathText.normalized(path, against: FileManager.default.currentDirectoryPath)).inserted { paths.append(path) }
        }
        return paths
    }
}

extension ProjectBinding {
    /// The project a manifest is for, as a run addresses it: `project.id`, else the id the connection takes
    /// from GOOGLE_CLOUD_PROJECT, GCLOUD_PROJECT or the service-account key (as `ProjectIDRule` does); and
    /// `project.senderId`.
    package static func addressed(_ settings: ProjectSettings, environment: [String: String]) -> ProjectBinding {
        ProjectBinding(id: ProjectID.resolve(declared: settings.id, environment: environment), senderId: settings.senderId)
    }
}
