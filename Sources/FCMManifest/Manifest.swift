import FCMCore

/// A manifest as written, before registrations are resolved: every value keeps where it came from.
package struct Manifest: Sendable {
    package var project: ManifestProject?
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
    package var location: SourceLocation
}

package struct ManifestGroup: Sendable {
    package var name: String
    package var members: [Located<String>]
    package var membersLocation: SourceLocation
    package var protect: Bool
    package var location: SourceLocation
}

package struct ManifestTopic: Sendable {
    package var name: String
    package var members: [Located<String>]
    package var membersLocation: SourceLocation
    package var ownership: Ownership
    package var protect: Bool
    package var location: SourceLocation
}
