import FCMCore
import Foundation

/// A manifest as written, before names are resolved: every value keeps where it came from.
package struct Manifest: Sendable {
    /// `include`: manifests (files or directories) loaded with this one, relative to it: an environment
    /// includes the shared base.
    package var includes: [Located<String>] = []
    package var project: ManifestProject?
    package var state: ManifestStateSettings?
    package var defaults: ManifestDefaults?
    package var devices = DeviceTable()
    /// `deviceFiles`: JSON Lines or CSV files of devices, relative to the manifest file that names them.
    package var deviceFiles: [Located<String>] = []
    package var groups: [String: ManifestGroup] = [:]
    package var topics: [String: ManifestTopic] = [:]
    package var files: [String] = []

    package init() {}
}

package struct Located<Value: Sendable>: Sendable {
    package var value: Value
    package var location: SourceLocation

    package init(_ value: Value, at location: SourceLocation) {
        self.value = value
        self.location = location
    }
}

package struct ManifestProject: Sendable {
    package var id: Located<String>?
    package var senderId: Located<String>?
    package var topicApi: Located<TopicAPI>?
    package var location: SourceLocation
}

package struct ManifestStateSettings: Sendable {
    package var backend: Located<String>?
    package var path: Located<String>?
    /// gcs: the bucket and the object prefix the state lives under.
    package var bucket: Located<String>?
    package var prefix: Located<String>?
    package var location: SourceLocation

    /// Where the state is: `gs://BUCKET/PREFIX` for gcs, a local path resolved against the manifest file
    /// that says so, or nil for the default.
    package var resolvedLocation: String? {
        if backend?.value == "gcs", let bucket {
            return "gs://\(bucket.value)/\(prefix?.value ?? "fcmctl")"
        }
        guard let path else { return nil }
        if path.value.hasPrefix("/") { return path.value }
        let directory = PathText.directory(of: path.location.file)
        return ((directory.isEmpty ? "." : directory) as NSString).appendingPathComponent(path.value)
    }
}

package struct ManifestDefaults: Sendable {
    package var ownership: Located<Ownership>?
    package var groupMode: Located<GroupMode>?
    package var protect: Located<Bool>?
    package var location: SourceLocation
}

package struct ManifestDevice: Sendable {
    package var name: String
    package var registration: Located<String>?
    package var kind: Registration.Kind
    package var labels: [String: String]
    package var location: SourceLocation
}

/// A member as written: a string that names a device or is a raw registration (decided when resolving),
/// or an explicit `{token: …}` / `{fid: …}`.
package enum MemberReference: Sendable {
    case name(Located<String>)
    case explicit(Registration, SourceLocation)

    package var location: SourceLocation {
        switch self {
        case .name(let located): located.location
        case .explicit(_, let location): location
        }
    }
}

package struct ManifestGroup: Sendable {
    package var name: String
    package var members: [MemberReference]
    package var membersLocation: SourceLocation
    package var protect: Located<Bool>?
    package var mode: Located<GroupMode>? = nil
    package var location: SourceLocation
}

package struct LabelSelector: Sendable {
    /// label → accepted values (a list in YAML means any of them).
    package var labels: [(key: String, values: [String])]
    package var location: SourceLocation
}

package struct ManifestTopic: Sendable {
    package var name: String
    package var members: [MemberReference]
    package var selector: LabelSelector?
    package var exclude: [MemberReference]
    package var membersLocation: SourceLocation
    package var ownership: Located<Ownership>?
    package var protect: Located<Bool>?
    /// `allowEmpty: true`: the topic may have no members (a selector matching no device is then not an error).
    package var allowEmpty: Located<Bool>? = nil
    package var location: SourceLocation
}
