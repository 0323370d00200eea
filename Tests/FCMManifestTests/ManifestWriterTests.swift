import FCMCore
import FCMManifest
import Testing

@Suite struct ManifestWriterTests {
    @Test func entriesComeOutCanonicalWithTheirCommentsAndHostileNamesQuoted() throws {
        var writer = ManifestWriter(header: ["Imported on 2026-11-24"])
        writer.add(.init(name: "zeta", comment: "2 found", members: [.device("kiosk-b"), .device("kiosk-a")]), to: .topics)
        writer.add(
            .init(name: "say \"hi\"\\now", comment: "line\nbreak", members: [.registration(Registration(value: "a:APA91b", kind: .token))]),
            to: .topics)
        let text = try writer.formatted(file: "imported.yaml")
        #expect(text.hasPrefix("# Imported on 2026-11-24\ntopics:\n"), "\(text)")
        // Sorted by the formatter, the members too; the comment kept on one line.
        #expect(text.contains("  zeta:  # 2 found\n    members:\n      - kiosk-a\n      - kiosk-b\n"), "\(text)")
        #expect(text.contains("# line break"), "\(text)")
        #expect(text.contains("      - a:APA91b\n"), "\(text)")
        // Quotes and a backslash inside a name need no quoting in YAML: the formatter writes it plain.
        #expect(text.contains(#"  say "hi"\now:  #"#), "\(text)")
    }

    @Test func aHeaderAloneIsAFileOfItsOwn() throws {
        let text = try ManifestWriter(header: ["nothing found."]).formatted(file: "imported.yaml")
        #expect(text == "# nothing found.\n")
    }

    /// A registration written bare must read back as itself: one spelt like a device name, one a bare word
    /// would read as a misspelt device, and a token shaped like a FID are written with their kind.
    @Test func aRegistrationThatWouldNotReadBackBareIsWrittenWithItsKind() throws {
        var writer = ManifestWriter(header: ["imported"], deviceNames: ["kiosk-a:1"])
        let members: [ManifestWriter.Member] = [
            .registration(Registration(value: "kiosk-a:1", kind: .token)),  // a device's name
            .registration(Registration(value: "shortword", kind: .token)),  // reads as an unknown device
            .registration(Registration(value: "cR1rjyj4_KcAPA91bGusQ2", kind: .token)),  // FID-shaped, but a token
            .registration(Registration(value: "dT4bLeT0dEv0fIdX0000Aa", kind: .fid)),  // a FID: bare
        ]
        writer.add(.init(name: "promo", comment: nil, members: members), to: .topics)
        let text = try writer.formatted(file: "imported.yaml")
        #expect(text.contains("      - token: kiosk-a:1\n"), "\(text)")
        #expect(text.contains("      - token: shortword\n"), "\(text)")
        #expect(text.contains("      - token: cR1rjyj4_KcAPA91bGusQ2\n"), "\(text)")
        #expect(text.contains("      - dT4bLeT0dEv0fIdX0000Aa\n"), "\(text)")
    }
}
