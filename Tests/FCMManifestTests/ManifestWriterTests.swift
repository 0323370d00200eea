import FCMManifest
import Testing

@Suite struct ManifestWriterTests {
    @Test func entriesComeOutCanonicalWithTheirCommentsAndHostileNamesQuoted() throws {
        var writer = ManifestWriter(header: ["Imported on 2026-11-24"])
        writer.add(.init(name: "zeta", comment: "2 found", members: ["kiosk-b", "kiosk-a"]), to: .topics)
        writer.add(.init(name: "say \"hi\"\\now", comment: "line\nbreak", members: ["a:APA91b"]), to: .topics)
        let text = try writer.formatted(file: "imported.yaml")
        #expect(text.hasPrefix("# Imported on 2026-11-24\ntopics:\n"), "\(text)")
        // Sorted by the formatter, the members too; the comment kept on one line.
        #expect(text.contains("  zeta:  # 2 found\n    members:\n      - kiosk-a\n      - kiosk-b\n"), "\(text)")
        #expect(text.contains("# line break"), "\(text)")
        // Quotes and a backslash inside a name need no quoting in YAML: the formatter writes it plain.
        #expect(text.contains(#"  say "hi"\now:  #"#), "\(text)")
    }

    @Test func aHeaderAloneIsAFileOfItsOwn() throws {
        let text = try ManifestWriter(header: ["nothing found."]).formatted(file: "imported.yaml")
        #expect(text == "# nothing found.\n")
    }
}
