/// The one place that decides how text from outside (names and labels from device exports, file names, YAML
/// keys, answers from FCM, GCS and token services) is shown: control characters (C0, DEL, C1, the line and
/// paragraph separators, bidirectional overrides) escaped as `\u{1B}`, never sent raw to a terminal or a CI log.
/// A GitHub runner reads a line that starts with `::` (after spaces) as a workflow command (`::error::`,
/// `::add-mask::`), so a line of such text never starts with one.
package enum PrintableText {
    package static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        // ASCII first: names and labels are almost always ASCII, and the general category is a table lookup
        // that cost a pull-request plan of 100,000 devices 4 % of its CPU.
        if scalar.value < 0x80 { return scalar.value < 0x20 || scalar.value == 0x7F }
        return scalar.properties.generalCategory == .control || scalar.value == 0x2028 || scalar.value == 0x2029
            || (0x202A...0x202E).contains(scalar.value) || (0x2066...0x2069).contains(scalar.value)
    }

    /// On one line: a line break is shown as `\n`, like every other control character.
    package static func oneLine(_ text: String) -> String {
        breakingCommand(escaped(text, keeping: []))
    }

    /// Text of several lines (a message that lists its causes): each line is made safe, the breaks kept.
    package static func lines(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: { isControl($0) && $0 != "\n" }) || text.contains("::") else { return text }
        return escaped(text, keeping: ["\n"]).split(separator: "\n", omittingEmptySubsequences: false).map { breakingCommand(String($0)) }
            .joined(separator: "\n")
    }

    /// Every control character but `keeping` escaped: a quoted source line keeps its tabs, which its caret
    /// line below repeats.
    package static func escaped(_ text: String, keeping: Set<Unicode.Scalar>) -> String {
        guard text.unicodeScalars.contains(where: { isControl($0) && !keeping.contains($0) }) else { return text }
        var out = ""
        out.unicodeScalars.reserveCapacity(text.unicodeScalars.count + 8)
        for scalar in text.unicodeScalars {
            if isControl(scalar) && !keeping.contains(scalar) {
                switch scalar {
                case "\n": out += "\\n"
                case "\r": out += "\\r"
                case "\t": out += "\\t"
                default: out += "\\u{\(String(scalar.value, radix: 16, uppercase: true))}"
                }
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// JSON text from a serializer that escapes only what JSON requires: the other control characters, which
    /// can only stand inside its strings, as `\uXXXX` (what `JSONWriter` writes).
    package static func jsonVisible(_ json: String) -> String {
        guard json.unicodeScalars.contains(where: { $0.value >= 0x7F && isControl($0) }) else { return json }
        var out = ""
        for scalar in json.unicodeScalars {
            if scalar.value >= 0x7F && isControl(scalar) {
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    static func breakingCommand(_ line: String) -> String {
        let body = line.drop { $0 == " " || $0 == "\t" }
        guard body.hasPrefix("::") else { return line }
        return line.prefix(line.count - body.count) + ": :" + body.dropFirst(2)
    }
}
