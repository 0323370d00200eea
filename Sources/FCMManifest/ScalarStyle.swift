/// Writes a scalar plain when YAML (1.1 and 1.2 readers alike) would read it back as the same string, and
/// double-quoted otherwise: numbers, booleans, nulls and anything with YAML syntax characters get quotes,
/// so a schema validator reading the file sees strings where fcmctl does.
enum ScalarStyle {
    static let reservedWords: Set<String> = [
        "true", "false", "yes", "no", "on", "off", "y", "n", "null", "~", "",
    ]

    /// `plain` says how the value was written: a plain `true`, `false` or null is a boolean or nothing to
    /// fcmctl, so it must stay plain; quoting it would turn it into a string.
    static func render(_ text: String, plain: Bool = false) -> String {
        if plain && typedPlainWords.contains(text) { return text }
        return needsQuotes(text) ? quoted(text) : text
    }

    static let typedPlainWords: Set<String> = ["true", "false", "null", "~"]

    static func needsQuotes(_ text: String) -> Bool {
        if reservedWords.contains(text.lowercased()) { return true }
        if looksNumeric(text) { return true }
        guard let first = text.unicodeScalars.first, let last = text.unicodeScalars.last else { return true }
        if " \t".unicodeScalars.contains(first) || " \t".unicodeScalars.contains(last) { return true }
        if "-?:,[]{}#&*!|>'\"%@`".unicodeScalars.contains(first) {
            // `-foo` is a fine plain scalar, but `- foo`, `-` and `--- ` are not.
            if first == "-", text.count > 1, !text.hasPrefix("- "), !text.hasPrefix("---") { return hasUnsafeInterior(text) }
            return true
        }
        return hasUnsafeInterior(text)
    }

    static func hasUnsafeInterior(_ text: String) -> Bool {
        if text.contains(": ") || text.contains(" #") || text.hasSuffix(":") { return true }
        if text.contains(",") || text.contains("[") || text.contains("]") || text.contains("{") || text.contains("}") { return true }
        return text.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F || $0 == "\u{FEFF}" || $0.properties.isWhitespace && $0 != " " }
    }

    static func looksNumeric(_ text: String) -> Bool {
        var body = Substring(text)
        if body.first == "+" || body.first == "-" { body = body.dropFirst() }
        if body.isEmpty { return false }
        if body.hasPrefix("0x") || body.hasPrefix("0o") || body == ".inf" || body == ".nan" || body == ".Inf" || body == ".NaN" { return true }
        return body.allSatisfy {
            $0.isASCII && ($0.isNumber || $0 == "." || $0 == "_" || $0 == "e" || $0 == "E" || $0 == ":" || $0 == "+" || $0 == "-")
        }
            && body.contains(where: \.isNumber)
    }

    static func quoted(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\t": out += "\\t"
            case "\r": out += "\\r"
            default:
                if scalar.value < 0x20 || scalar.value == 0x7F || scalar == "\u{FEFF}" {
                    let hex = String(scalar.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out + "\""
    }
}
