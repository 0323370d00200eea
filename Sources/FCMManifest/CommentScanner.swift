/// Finds YAML comments in source bytes. libyaml's event stream drops comments, so `fmt` locates them
/// itself: a `#` at the start of a line or after white space, outside quoted scalars.
struct SourceComment: Hashable {
    var line: Int
    var column: Int
    /// From the `#` to the end of the line, trailing white space removed.
    var text: String
    /// Nothing but white space before it on its line.
    var ownLine: Bool
}

enum CommentScanner {
    static func scan(_ bytes: [UInt8]) -> [SourceComment] {
        var comments: [SourceComment] = []
        var line = 1
        var column = 1
        var quote: UInt8?
        var lineHasContent = false
        var previous: UInt8 = UInt8(ascii: "\n")
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\n") {
                line += 1
                column = 1
                lineHasContent = false
                previous = byte
                index += 1
                continue
            }
            if let open = quote {
                if open == UInt8(ascii: "\"") && byte == UInt8(ascii: "\\") {
                    index += 2
                    column += 2
                    continue
                }
                if byte == open {
                    if open == UInt8(ascii: "'") && index + 1 < bytes.count && bytes[index + 1] == UInt8(ascii: "'") {
                        index += 2
                        column += 2
                        continue
                    }
                    quote = nil
                }
            } else if byte == UInt8(ascii: "#") && (previous == UInt8(ascii: " ") || previous == UInt8(ascii: "\t") || previous == UInt8(ascii: "\n"))
            {
                var end = index
                while end < bytes.count && bytes[end] != UInt8(ascii: "\n") { end += 1 }
                var text = String(decoding: bytes[index..<end], as: UTF8.self)
                while text.last == " " || text.last == "\t" || text.last == "\r" { text.removeLast() }
                comments.append(SourceComment(line: line, column: column, text: text, ownLine: !lineHasContent))
                column += end - index
                index = end
                continue
            } else if (byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "'")) && isQuoteStart(previous) {
                quote = byte
            }
            if byte != UInt8(ascii: " ") && byte != UInt8(ascii: "\t") && byte != UInt8(ascii: "\r") { lineHasContent = true }
            previous = byte
            // Columns count characters, as libyaml's marks do: skip UTF-8 continuation bytes.
            if byte & 0xC0 != 0x80 { column += 1 }
            index += 1
        }
        return comments
    }

    /// A quote opens a quoted scalar only where a scalar can start, not inside a plain one (`it's`).
    static func isQuoteStart(_ previous: UInt8) -> Bool {
        [
            UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\n"), UInt8(ascii: "["), UInt8(ascii: "{"), UInt8(ascii: ","),
            UInt8(ascii: ":"), UInt8(ascii: "-"),
        ].contains(previous)
    }
}
