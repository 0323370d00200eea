import Foundation

extension SavedPlan {
    /// The canonical bytes of each section, named. Every field of the plan is in exactly one section, so an
    /// edit anywhere changes the digest; the digest fields themselves are in none. Dictionaries are written
    /// with sorted keys and sets as sorted arrays, so the same plan always gives the same bytes.
    package func digestSections() throws -> [(name: String, bytes: Data)] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        var sections: [(String, Data)] = []
        func section(_ name: String, _ fields: [(String, any Encodable)]) throws {
            var bytes = Data()
            for (field, value) in fields {
                bytes += Data("\(field)=".utf8)
                // Wrapped in an array: a bare nil or scalar is not a JSON document to every encoder.
                bytes += try encoder.encode([AnyEncodable(value)])
                bytes += Data("\n".utf8)
            }
            sections.append((name, bytes))
        }
        try section("about", [("formatVersion", formatVersion), ("fcmctlVersion", fcmctlVersion), ("createdAt", createdAt.ISO8601Format())])
        try section("manifest", [("manifestDigest", manifestDigest), ("manifestPaths", manifestPaths)])
        try section("state", [("statePath", statePath), ("stateSerial", stateSerial), ("lineage", lineage)])
        try section("project", [("project", project)])
        try section("limits", [("maxRemovals", maxRemovals), ("options", options)])
        try section("groups", [("declaredGroups", declaredGroups), ("groups", groups)])
        try section("topics", [("topics", topics)])
        try section("observations", [("observations", observations), ("fingerprints", fingerprints)])
        try section("display", [("notes", notes), ("deviceNames", deviceNames)])
        return sections
    }

    /// Who runs the hash is the caller's business (FCMCore stays free of crypto): it gets each section's bytes,
    /// then the lines `name sha256\n` of every section, in name order, for the whole.
    package func computeDigest(sha256: (Data) -> String) throws -> (digest: String, parts: [String: String]) {
        var parts: [String: String] = [:]
        for (name, bytes) in try digestSections() { parts[name] = sha256(bytes) }
        let lines = parts.keys.sorted().map { "\($0) \(parts[$0]!)\n" }.joined()
        return ("sha256:" + sha256(Data(lines.utf8)), parts)
    }
}

private struct AnyEncodable: Encodable {
    let value: any Encodable
    init(_ value: any Encodable) { self.value = value }
    func encode(to encoder: any Encoder) throws { try value.encode(to: encoder) }
}
