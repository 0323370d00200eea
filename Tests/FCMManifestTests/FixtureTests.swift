import FCMCore
import FCMManifest
import Foundation
import Testing

/// Each invalid fixture marks its expected error on the offending line with `# ERROR: <text>`; the
/// loader must report exactly those errors (message starting with the text, on that line), no more.
@Suite struct FixtureTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures")

    static func files(_ folder: String) -> [String] {
        let directory = root.appendingPathComponent(folder)
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return names.filter { $0.hasSuffix(".yaml") }.sorted().map { directory.appendingPathComponent($0).path }
    }

    /// `# ERROR: text` / `# WARNING: text` on the line the diagnostic must point at. Read leniently, so
    /// fixtures with invalid UTF-8 still yield their markers.
    static func markers(in path: String, _ tag: String = "ERROR") throws -> [(line: Int, text: String)] {
        let text = String(decoding: try Data(contentsOf: URL(fileURLWithPath: path)), as: UTF8.self)
        return text.split(separator: "\n", omittingEmptySubsequences: false).enumerated().compactMap { index, line in
            guard let range = line.range(of: "# \(tag): ") else { return nil }
            return (index + 1, String(line[range.upperBound...]))
        }
    }

    @Test(arguments: files("invalid"))
    func invalidFixtureReportsExactlyItsMarkedErrors(path: String) throws {
        let expected = try Self.markers(in: path)
        #expect(!expected.isEmpty, "fixture without an ERROR marker")
        let result = ManifestLoader(outsidePaths: .repository).load(paths: [path])
        #expect(result.manifest == nil)
        let errors = result.diagnostics.filter { $0.severity == .error }
        #expect(errors.count == expected.count, "\(errors.map(\.headline))")
        for marker in expected {
            let match = errors.contains { $0.location?.line == marker.line && $0.location?.file == path && $0.message.hasPrefix(marker.text) }
            #expect(match, "expected line \(marker.line): \(marker.text); got \(errors.map(\.headline))")
        }
    }

    @Test(arguments: files("valid"))
    func validFixtureLoads(path: String) {
        let result = ManifestLoader(outsidePaths: .repository).load(paths: [path])
        #expect(result.manifest != nil, "\(result.diagnostics.map(\.headline))")
    }

    @Test func anchorsAliasesAndMergeKeysResolve() throws {
        let result = ManifestLoader(outsidePaths: .repository).load(paths: [Self.root.appendingPathComponent("valid/anchors-and-merge.yaml").path])
        let desired = try #require(result.desiredState)
        let staff: Set<String> = ["staff1:APA91b", "staff2:APA91b"]
        #expect(Set(desired.topics["news"]?.members.map(\.value) ?? []) == staff)
        #expect(desired.topics["news"]?.ownership == .additive, "a key set in the mapping wins over the merged one")
        #expect(desired.topics["base"]?.ownership == .authoritative)
        #expect(Set(desired.topics["alerts"]?.members.map(\.value) ?? []) == staff)
    }
}
