import FCMCore
import Foundation

/// Markdown escaping for what fcmctl does not control (group, device, topic and file names, messages), so
/// GitHub shows it exactly as written. Backticks need care: inside a code span a backslash is literal, so
/// an escaped backtick (`\``) shows the backslash and ends the span early; a span or fence is instead
/// delimited by more backticks than the longest run inside it (CommonMark 6.1, 4.5).
package enum MarkdownText {
    /// Text inside HTML (a `<summary>`, a `<code>`): entities for what HTML or Markdown could read as markup.
    /// The backtick too, so the text stays literal even where GitHub reads the line as Markdown.
    package static func html(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for character in PrintableText.escaped(text, keeping: ["\n"]) {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "`": out += "&#96;"
            case "\n": out += " "
            default: out.append(character)
            }
        }
        return out
    }

    /// A code span holding `text` literally: `` `x` ``, or with longer fences when `text` has backticks. Not
    /// for table cells, where a `|` would end the cell even inside the span.
    /// CommonMark strips one space on each side when both are there, so a space pads text that starts or ends
    /// with a backtick (or a space), and the pair is stripped again on rendering.
    package static func code(_ text: String) -> String {
        let flat = PrintableText.escaped(text, keeping: ["\n"]).replacingOccurrences(of: "\n", with: " ")
        let fence = String(repeating: "`", count: longestRun(of: "`", in: flat) + 1)
        let padded = flat.hasPrefix("`") || flat.hasSuffix("`") || (flat.hasPrefix(" ") && flat.hasSuffix(" ") && !flat.allSatisfy { $0 == " " })
        return padded ? "\(fence) \(flat) \(fence)" : "\(fence)\(flat)\(fence)"
    }

    /// A fenced code block of `lines`, its fence longer than any backtick run in them, so no line (a device
    /// name of backticks, say) can close it early and every line shows as written.
    package static func fencedBlock(_ lines: [String], info: String = "") -> String {
        let longest = lines.reduce(0) { max($0, longestRun(of: "`", in: $1)) }
        let fence = String(repeating: "`", count: max(3, longest + 1))
        var text = fence + info + "\n"
        for line in lines {
            text += PrintableText.escaped(line, keeping: ["\n", "\t"]).replacingOccurrences(of: "\n", with: " ")
            text += "\n"
        }
        return text + fence + "\n"
    }

    /// A paragraph or list item: characters Markdown would read as markup are escaped. (Outside a code span a
    /// backslash-escaped backtick is a literal backtick.)
    package static func inline(_ text: String) -> String {
        var out = ""
        for character in PrintableText.escaped(text, keeping: ["\n"]) {
            if "\\`*_[]<>|#~".contains(character) { out.append("\\") }
            if character == "\n" {
                out.append(" ")
            } else {
                out.append(character)
            }
        }
        return out
    }

    package static func longestRun(of mark: Character, in text: String) -> Int {
        var longest = 0
        var run = 0
        for character in text {
            run = character == mark ? run + 1 : 0
            longest = max(longest, run)
        }
        return longest
    }
}
