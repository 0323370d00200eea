import FCMManifest
import Foundation

/// `fcmctl fmt --check examples/` and `fcmctl validate a/ b.yaml`: positional paths, with directories walked
/// recursively the way `terraform fmt -recursive` users expect. Each directory that directly holds a
/// manifest is one manifest set (its files are merged, as `-f DIR` does); YAML that is not a manifest (a
/// GitHub workflow, say) and hidden directories (.git, .fcmctl, .build) are skipped.
enum ManifestSets {
    /// Sets whose every file another set includes (an environments layout's shared base) are not sets of
    /// their own: alone they lack the project the environments give them, and they are checked with each.
    static func expandSkippingIncluded(_ paths: [String], _ outsidePaths: PathConfinement.Policy) -> [[String]] {
        let sets = expand(paths)
        guard sets.count > 1 else { return sets }
        let loaded = sets.map { ManifestLoader(outsidePaths: outsidePaths).load(paths: $0) }
        let included = Set(loaded.flatMap { $0.includedFiles.map(ManifestLoader.identity) })
        guard !included.isEmpty else { return sets }
        return zip(sets, loaded).filter { _, result in
            let files = result.ownFiles.map(ManifestLoader.identity)
            return files.isEmpty || !files.allSatisfy(included.contains)
        }.map(\.0)
    }

    static func expand(_ paths: [String]) -> [[String]] {
        var sets: [[String]] = []
        for path in paths {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue else {
                sets.append([path])  // a file, or a missing path the loader reports
                continue
            }
            for directory in walk(path) { sets.append([directory]) }
        }
        return sets
    }

    /// `directory` and every directory below it that holds a manifest, sorted.
    static func walk(_ directory: String) -> [String] {
        let entries = ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).sorted()
        var found: [String] = []
        let yaml = entries.filter { ($0.hasSuffix(".yaml") || $0.hasSuffix(".yml")) && !$0.hasPrefix(".") }
        if yaml.contains(where: { isManifest((directory as NSString).appendingPathComponent($0)) }) { found.append(directory) }
        for entry in entries where !entry.hasPrefix(".") {
            let child = (directory as NSString).appendingPathComponent(entry)
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: child, isDirectory: &isDirectory), isDirectory.boolValue,
                (try? FileManager.default.destinationOfSymbolicLink(atPath: child)) == nil
            {
                found += walk(child)
            }
        }
        return found
    }

    /// A manifest names its project or its apiVersion at the top level; a workflow or a config file does not.
    static func isManifest(_ file: String) -> Bool {
        guard let handle = FileHandle(forReadingAtPath: file) else { return false }
        defer { try? handle.close() }
        let head = String(decoding: handle.readData(ofLength: 64 * 1024), as: UTF8.self)
        return head.split(separator: "\n").contains { $0.hasPrefix("project:") || $0.hasPrefix("apiVersion: fcmctl/") }
    }
}
