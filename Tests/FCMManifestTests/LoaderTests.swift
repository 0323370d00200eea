import FCMCore
import FCMManifest
import Foundation
import Testing

@Suite struct LoaderTests {
    func temporaryDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("fcmctl-loader-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    @Test func directoryFilesAreMergedAndDuplicatesReportedAtBothPlaces() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        try "project: {id: p, senderId: \"42\"}\ntopics:\n  news: [\"a:APA91b\"]\n".write(
            to: dir.appendingPathComponent("a.yaml"), atomically: true, encoding: .utf8)
        try "topics:\n  sports: [\"b:APA91b\"]\n".write(to: dir.appendingPathComponent("b.yml"), atomically: true, encoding: .utf8)
        let merged = ManifestLoader(outsidePaths: .repository).load(paths: [dir.path])
        #expect(merged.manifest.map { Set($0.topics.keys) } == ["news", "sports"])

        try "topics:\n  news: [\"c:APA91b\"]\n".write(to: dir.appendingPathComponent("c.yaml"), atomically: true, encoding: .utf8)
        let clash = ManifestLoader(outsidePaths: .repository).load(paths: [dir.path])
        #expect(clash.manifest == nil)
        let places = clash.diagnostics.filter { $0.message.hasPrefix("topic/news is defined twice") }.compactMap(\.location)
        #expect(Set(places.map { ($0.file as NSString).lastPathComponent }) == ["a.yaml", "c.yaml"])
    }

    @Test func directoryWithoutYamlAndMissingPathsAreErrors() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let empty = ManifestLoader(outsidePaths: .repository).load(paths: [dir.path])
        #expect(empty.diagnostics.map(\.message) == ["\(dir.path): the directory holds no *.yaml or *.yml files"])
        let missing = ManifestLoader(outsidePaths: .repository).load(paths: [dir.appendingPathComponent("nope.yaml").path])
        #expect(missing.diagnostics.first?.message.contains("no such file or directory") == true)
    }

    @Test func emptyFileIsAnErrorAtLineOne() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("empty.yaml").path
        #expect(FileManager.default.createFile(atPath: path, contents: Data()))
        let result = ManifestLoader(outsidePaths: .repository).load(paths: [path])
        #expect(result.diagnostics.map(\.headline) == ["\(path):1:1: error: the file is empty: a manifest needs at least 'apiVersion' and 'project'"])
    }

    @Test func aliasBombIsRefusedQuickly() throws {
        var text = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n"
        for level in 1...9 {
            text += "a\(level): &a\(level) [" + Array(repeating: "*a\(level - 1)", count: 10).joined(separator: ", ") + "]\n"
        }
        // 10^10 nodes if expanded: reaching the budget error at all shows the reader stopped early.
        let result = YAMLReader().read(Array(text.utf8), file: "bomb.yaml")
        #expect(result.0 == nil)
        #expect(
            result.1.map(\.headline) == [
                "bomb.yaml:7:25: error: the document expands to more than 5000000 nodes through aliases; refusing it (an alias bomb?): use fewer nested aliases"
            ])
    }

    @Test func invalidUTF8IsReportedNotCrashed() {
        let (root, diagnostics) = YAMLReader().read([0x61, 0x3A, 0x20, 0xFF, 0xFE, 0x0A], file: "bad.yaml")
        #expect(root == nil)
        #expect(diagnostics.first?.message.hasPrefix("the file is not valid UTF-8 text") == true)
    }

    @Test func locationsAreOneBased() {
        let (root, _) = YAMLReader().read(Array("a:\n  b: c\n".utf8), file: "f.yaml")
        guard case .mapping(let top)? = root?.value, case .mapping(let inner) = top[0].value.value else {
            Issue.record("expected nested mappings")
            return
        }
        #expect(top[0].key.location == SourceLocation(file: "f.yaml", line: 1, column: 1))
        #expect(inner[0].value.location == SourceLocation(file: "f.yaml", line: 2, column: 6))
    }

    @Test func suggestions() {
        #expect(Suggestions.closest(to: "topicz", in: ["groups", "topics", "project"]) == "topics")
        #expect(Suggestions.closest(to: "zzzzzz", in: ["groups", "topics"]) == nil)
    }
}

@Suite struct HostileInputTests {
    func directory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("fcmctl-hostile-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    @Test func tenMegabyteScalarIsRefusedWithItsLocation() throws {
        let dir = try directory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("huge.yaml").path
        let huge = String(repeating: "A", count: 10 << 20)
        try "project: {id: p, senderId: \"1\"}\ntopics:\n  news: [\"\(huge)\"]\n".write(toFile: path, atomically: true, encoding: .utf8)
        let result = ManifestLoader(outsidePaths: .repository).load(paths: [path])
        #expect(result.manifest == nil)
        #expect(
            result.diagnostics.map(\.headline) == [
                "\(path):3:10: error: a value of 10485760 bytes, more than the 64 KiB any manifest value may be (a registration is at most 4 KiB)"
            ])
        // Below the reader's limit, the registration rule still names the object.
        let long = String(repeating: "A", count: 5000)
        try "project: {id: p, senderId: \"1\"}\ntopics:\n  news: [\"\(long)\"]\n".write(toFile: path, atomically: true, encoding: .utf8)
        #expect(
            ManifestLoader(outsidePaths: .repository).load(paths: [path]).diagnostics.map(\.headline) == [
                "\(path):3:10: error: topic/news: a registration must be at most 4096 bytes"
            ])
    }

    @Test func symlinkLoopIsAnErrorNotAHang() throws {
        let dir = try directory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let a = dir.appendingPathComponent("a.yaml").path
        let b = dir.appendingPathComponent("b.yaml").path
        try FileManager.default.createSymbolicLink(atPath: a, withDestinationPath: b)
        try FileManager.default.createSymbolicLink(atPath: b, withDestinationPath: a)
        let single = ManifestLoader(outsidePaths: .repository).load(paths: [a])
        #expect(single.manifest == nil)
        #expect(single.diagnostics.first?.message.contains("symlink loop") == true)
        let whole = ManifestLoader(outsidePaths: .repository).load(paths: [dir.path])
        #expect(whole.manifest == nil)
        #expect(whole.diagnostics.allSatisfy { $0.severity == .error })
        #expect(!whole.diagnostics.isEmpty)
    }

    @Test func byteOrderMarkIsAccepted() throws {
        let bytes: [UInt8] = [0xEF, 0xBB, 0xBF] + Array("project: {id: p, senderId: \"1\"}\ntopics:\n  news: [\"a:APA91b\"]\n".utf8)
        let (root, diagnostics) = YAMLReader().read(bytes, file: "bom.yaml")
        #expect(root != nil)
        #expect(diagnostics.isEmpty)
    }

    @Test func selectorMatchingNothingIsAnErrorUnlessAllowedEmpty() throws {
        let dir = try directory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("m.yaml").path
        try """
        project: {id: p, senderId: "1"}
        devices:
          k1: {token: "k1:APA91b", labels: {site: nyc}}
        topics:
          lon:
            members:
              selector: {site: lon}
          nyc:
            members:
              selector: {site: [nyc, sfo]}
              exclude: []
        """.write(toFile: path, atomically: true, encoding: .utf8)
        let result = ManifestLoader(outsidePaths: .repository).load(paths: [path])
        #expect(
            result.diagnostics.map(\.headline) == [
                "\(path):7:17: error: topic/lon: no device has site=lon (devices have site='nyc'). Fix the manifest or the device files, "
                    + "or declare the topic `allowEmpty: true` if it is meant to have no members: planned as it is, it would remove every "
                    + "device fcmctl subscribed to it"
            ])
        #expect(result.desiredState == nil)

        // Said to be empty: no diagnostic, and the topic plans with no members.
        try String(contentsOfFile: path, encoding: .utf8).replacingOccurrences(of: "  lon:\n", with: "  lon:\n    allowEmpty: true\n")
            .write(toFile: path, atomically: true, encoding: .utf8)
        let allowed = ManifestLoader(outsidePaths: .repository).load(paths: [path])
        #expect(allowed.diagnostics.isEmpty, "\(allowed.diagnostics.map(\.headline))")
        #expect(allowed.desiredState?.topics["nyc"]?.members.map(\.value) == ["k1:APA91b"])
        #expect(allowed.desiredState?.topics["lon"]?.members.isEmpty == true)
    }
}

@Suite struct NormalisationTests {
    @Test func legacyTopicPrefixIsStrippedWithANote() throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("fcmctl-prefix-\(UUID().uuidString).yaml")
        defer { try? FileManager.default.removeItem(at: url) }
        try "project: {id: p, senderId: \"1\"}\ntopics:\n  /topics/news: [\"a:APA91b\"]\n".write(to: url, atomically: true, encoding: .utf8)
        let result = ManifestLoader(outsidePaths: .repository).load(paths: [url.path])
        #expect(
            result.diagnostics.map(\.headline) == [
                "\(url.path):3:3: note: topic '/topics/news' is read as 'news': the v1 API takes names without '/topics/'"
            ])
        #expect(result.desiredState.map { Array($0.topics.keys) } == ["news"])
    }
}

/// Inputs that once crashed fcmctl (stack overflow on release of a deep tree) are refused with a location.
@Suite struct NestingLimitTests {
    @Test(arguments: [("[", "]", 47_588), ("{a: ", "}", 40_000)])
    func deepNestingIsALocatedError(open: String, close: String, depth: Int) throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("deep-\(UUID().uuidString).yaml").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        try (String(repeating: open, count: depth) + "x" + String(repeating: close, count: depth) + "\n").write(
            toFile: path, atomically: true, encoding: .utf8)
        let result = ManifestLoader(outsidePaths: .repository).load(paths: [path])
        #expect(result.manifest == nil)
        #expect(result.diagnostics.count == 1)
        #expect(result.diagnostics.first?.headline.hasPrefix("\(path):1:") == true)
        #expect(result.diagnostics.first?.message == "nesting deeper than 256 levels; a manifest needs far fewer")
    }
}
