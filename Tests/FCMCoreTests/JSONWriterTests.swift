import FCMCore
import Foundation
import Testing

/// The writer's fast paths (digits in place, plain text copied whole) must write what the slow ones did.
@Suite struct JSONWriterTests {
    func written(_ body: (inout JSONWriter) -> Void) -> String {
        var writer = JSONWriter()
        body(&writer)
        return String(decoding: writer.bytes, as: UTF8.self)
    }

    @Test(arguments: [0, 7, -1, 10, 99, 1_000_000, Int.max, Int.min, -9_223_372_036_854_775_807])
    func integersAsSwiftPrintsThem(value: Int) {
        #expect(written { $0.int(value) } == String(value))
    }

    @Test func plainTextIsCopiedAndEverythingElseEscaped() throws {
        #expect(written { $0.string("abc:APA91b_-") } == #""abc:APA91b_-""#)
        #expect(written { $0.string("a\"b\\c") } == #""a\"b\\c""#)
        #expect(written { $0.string("tab\there\u{7F}") } == #""tab\u0009here\u007f""#)
        #expect(written { $0.string("caf\u{E9} \u{202E}") } == "\"caf\u{E9} \\u202e\"")
        #expect(written { $0.string("") } == #""""#)
        for text in ["abc:APA91b", "q\"uote", "é", "\u{1}"] {
            let viaBytes = written { writer in Array(text.utf8).withUnsafeBufferPointer { writer.string(utf8: $0) } }
            #expect(viaBytes == written { $0.string(text) })
            #expect(try JSONSerialization.jsonObject(with: Data(viaBytes.utf8), options: .fragmentsAllowed) as? String == text)
        }
    }
}
