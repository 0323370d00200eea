import FCMCore
import FCMManifest
import Foundation

/// Manifests read and resolved, with what they were read from.
package struct LoadedManifest {
    package var manifest: Manifest
    package var resolution: Resolution
    /// The YAML files read, by path, and the device files' digests: what a saved plan's manifest digest covers.
    package var sources: [String: [UInt8]]
    package var deviceFileDigests: [String: String]

    /// What a saved plan records of the files, to tell whether they changed since.
    package var digest: String { ManifestDigest.of(sources, deviceFiles: deviceFileDigests) }

    /// Built on demand: at fleet scale it hashes every subscription, which `validate` does not need.
    package func desiredState(namingDevices: Bool = true) -> DesiredState {
        manifest.desiredState(resolution, namingDevices: namingDevices)
    }
}

/// The first stage of every command: the manifests, their diagnostics, and the project-id rule that needs
/// the environment. The caller shows the diagnostics; nothing here prints.
package enum ManifestStage {
    package struct Result {
        package var loaded: LoadedManifest?
        package var sources: [String: [UInt8]]
        package var deviceFileDigests: [String: String]
        package var diagnostics: [Diagnostic]

        package var errorCount: Int { diagnostics.filter { $0.severity == .error }.count }
    }

    package static func load(_ paths: [String], outsidePaths: PathConfinement.Policy, environment: [String: String]) -> Result {
        let result = ManifestLoader(outsidePaths: outsidePaths).load(paths: paths)
        var diagnostics = result.diagnostics
        if let manifest = result.manifest, let missing = ProjectIDRule.check(manifest, environment: environment) {
            diagnostics.append(missing)
        }
        guard let manifest = result.manifest, let resolution = result.resolution, !diagnostics.hasErrors else {
            return Result(loaded: nil, sources: result.sources, deviceFileDigests: result.deviceFileDigests, diagnostics: diagnostics)
        }
        return Result(
            loaded: LoadedManifest(
                manifest: manifest, resolution: resolution, sources: result.sources, deviceFileDigests: result.deviceFileDigests),
            sources: result.sources, deviceFileDigests: result.deviceFileDigests, diagnostics: diagnostics)
    }

    /// "Devices: 100000 (99990 from fleet.jsonl, 10 from lab.csv)": what the device files contributed.
    package static func deviceFileCounts(_ manifest: Manifest) -> String? {
        var counts: [String: Int] = [:]
        for (file, count) in manifest.devices.countsByFile() where DeviceFileFormat.isDeviceFile(file) {
            counts[(file as NSString).lastPathComponent, default: 0] += count
        }
        guard !counts.isEmpty else { return nil }
        let parts = counts.sorted { $0.key < $1.key }.map { "\($0.value) from \($0.key)" }
        return "Devices: \(manifest.devices.count) (\(parts.joined(separator: ", ")))."
    }
}
