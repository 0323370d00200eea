import FCMCore
import FCMManifest
import Foundation
import Testing

/// schemas/manifest.schema.json and the loader describe one language; these tests keep them in step.
@Suite struct SchemaAgreementTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    func schema() throws -> [String: Any] {
        let data = try Data(contentsOf: Self.root.appendingPathComponent("schemas/manifest.schema.json"))
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    func properties(_ object: [String: Any]?, _ path: [String]) -> Set<String> {
        var node = object
        for key in path { node = node?[key] as? [String: Any] }
        return Set((node?["properties"] as? [String: Any])?.keys.map { $0 } ?? [])
    }

    @Test func fixedKeysMatchTheLoader() throws {
        let schema = try schema()
        let top = schema["properties"] as? [String: Any]
        let defs = schema["$defs"] as? [String: Any]
        #expect(properties(schema, []) == Set(ManifestSchema.topLevel))
        #expect(properties(top, ["project"]) == Set(ManifestSchema.project))
        #expect(properties(top, ["state"]) == Set(ManifestSchema.state))
        #expect(properties(top, ["defaults"]) == Set(ManifestSchema.defaults))
        #expect(properties(defs, ["device"]) == Set(ManifestSchema.device))
    }

    /// Runs the Python checker (jsonschema over PyYAML's C loader) on every example and fixture.
    @Test func pythonJsonSchemaAgreesOnEveryExampleAndFixture() throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", Self.root.appendingPathComponent("scripts/check_schema.py").path]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "\(text)")
        #expect(text.contains(" passed, 0 failed"), "\(text)")
    }

    /// Every example directory but a shared base, which is validated with the environments that include it.
    @Test(
        arguments: FormatterTests.examples.map { ($0 as NSString).deletingLastPathComponent }.reduce(into: [String]()) {
            if !$0.contains($1) && !$1.hasSuffix("/environments/base") { $0.append($1) }
        })
    func everyExampleValidates(directory: String) {
        let result = ManifestLoader(outsidePaths: .repository).load(paths: [directory])
        #expect(result.manifest != nil, "\(result.diagnostics.map(\.headline))")
        #expect(result.diagnostics.filter { $0.severity != .note }.isEmpty, "\(result.diagnostics.map(\.headline))")
    }
}
