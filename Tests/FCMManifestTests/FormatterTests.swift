import FCMCore
import Foundation
import Testing

@testable import FCMManifest

@Suite struct FormatterTests {
    static let examples: [String] = {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("examples")
        let enumerator = FileManager.default.enumerator(atPath: root.path)
        var files: [String] = []
        while let path = enumerator?.nextObject() as? String {
            if path.hasSuffix(".yaml") { files.append(root.appendingPathComponent(path).path) }
        }
        return files.sorted()
    }()

    func format(_ text: String) throws -> String {
        try ManifestFormatter.formatChecked(file: "t.yaml", bytes: Array(text.utf8))
    }

    @Test(arguments: examples)
    func examplesAreCanonical(path: String) throws {
        let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        #expect(try ManifestFormatter.formatChecked(file: path, bytes: bytes) == String(decoding: bytes, as: UTF8.self))
    }

    @Test func canonicalFormSortsOrdersQuotesAndKeepsComments() throws {
        let messy = """
            # header comment
            topics:   # the topics
              zeta: {members: [b2:APA91b, a1:APA91b]}   # trailing on zeta: it stays with the last value written on its line
              alpha:
                protect: true
                # about members
                members: [x:APA91b]
                ownership: observe
            project: {senderId: 42, id: p}
            # footer comment

            """
        let expected = """
            # header comment
            project:
              id: p
              senderId: "42"
            topics:  # the topics
              alpha:
                ownership: observe
                protect: true
                # about members
                members:
                  - x:APA91b
              zeta:
                members:
                  - a1:APA91b  # trailing on zeta: it stays with the last value written on its line
                  - b2:APA91b
            # footer comment

            """
        #expect(try format(messy) == expected)
        #expect(try format(expected) == expected, "formatting is idempotent")
    }

    @Test func everyCommentSurvives() throws {
        let text = """
            # one
            project: {id: p, senderId: "1"}  # two
            devices:
              # three
              b: {token: "b:APA91b", labels: {z: "1", a: "2"}}  # four
              a:
                fid: cR1rjyj4_KcAPA91bGusQ2  # five
            # six
            """
        let output = try format(text)
        for comment in ["# one", "# two", "# three", "# four", "# five", "# six"] {
            #expect(output.contains(comment), "\(comment) lost in:\n\(output)")
        }
    }

    @Test(arguments: [
        ("base: &b {members: []}\ntopics: {news: *b}\n", "anchors or aliases"),
        ("project:\n  id: |\n    p\n", "block scalars"),
        ("topics:\n  news: [\n    a:APA91b\n  ]  # closing\n", "follows no value"),
        ("%YAML 1.1\n---\ntopics: {}\n", "directives"),
    ])
    func refusesWhatItCannotKeepFaithfully(text: String, reason: String) {
        #expect {
            _ = try format(text)
        } throws: { error in
            (error as? FormatRefusal)?.reason.contains(reason) == true
        }
    }

    @Test func plainBooleansStayBooleansAndNumbersGetQuotes() {
        #expect(ScalarStyle.render("true", plain: true) == "true")
        #expect(ScalarStyle.render("true", plain: false) == "\"true\"")
        #expect(ScalarStyle.render("123456789012") == "\"123456789012\"")
        #expect(ScalarStyle.render("yes") == "\"yes\"")
        #expect(ScalarStyle.render("fGw0qy4TGgk:APA91bHun") == "fGw0qy4TGgk:APA91bHun")
        #expect(ScalarStyle.render("a: b") == "\"a: b\"")
        #expect(ScalarStyle.render("-kiosk") == "-kiosk")
        #expect(ScalarStyle.render("- kiosk") == "\"- kiosk\"")
        #expect(ScalarStyle.render("tab\there") == "\"tab\\there\"")
    }

    @Test func commentScannerIgnoresHashesInsideQuotesAndWords() {
        let comments = CommentScanner.scan(Array("a: \"x # y\"  # real\nb: c#d\n# own\nc: 'it''s # not'\n".utf8))
        #expect(comments.map(\.text) == ["# real", "# own"])
        #expect(comments.map(\.ownLine) == [false, true])
        #expect(comments.first?.column == 13)
    }
}
