package enum ConsoleText {
    /// Server text made safe to print on one line: control characters escaped (`\n`, `\u{1B}`), so an error
    /// message from FCM, GCS or a token service can neither start a GitHub workflow command (`::error::`,
    /// `::add-mask::` work only at the start of a line) nor move a terminal's cursor or ring its bell; and a
    /// leading `::` is broken up for the same reason.
    package static func oneLine(_ text: String) -> String {
        var out = ""
        out.unicodeScalars.reserveCapacity(text.unicodeScalars.count)
        for scalar in text.unicodeScalars {
            // Bidirectional overrides and isolates can make a line read differently from what it holds.
            let bidi = (0x202A...0x202E).contains(scalar.value) || (0x2066...0x2069).contains(scalar.value)
            switch scalar {
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.properties.generalCategory == .control || bidi:
                out += "\\u{\(String(scalar.value, radix: 16, uppercase: true))}"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out.hasPrefix("::") ? ": :" + out.dropFirst(2) : out
    }
}
