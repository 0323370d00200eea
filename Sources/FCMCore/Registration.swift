/// An app registration as FCM knows it: a legacy FCM token or a Firebase Installation ID (FID).
/// Two kinds exist because FCM is moving from tokens to FIDs (wire reference §0.4).
package struct Registration: Hashable, Comparable, Sendable, CustomStringConvertible {
    package enum Kind: String, Sendable, Codable {
        case token
        case fid
    }

    package let value: String
    package let kind: Kind

    package init(value: String, kind: Kind) {
        self.value = value
        self.kind = kind
    }

    /// Infers the kind from the shape: FIDs are 22 base64url characters whose first is c, d, e or f
    /// (firebase-js-sdk `VALID_FID_PATTERN`, wire reference §7); anything else is treated as a token.
    package init(inferring value: String) {
        self.init(value: value, kind: Registration.looksLikeFID(value) ? .fid : .token)
    }

    package static func looksLikeFID(_ value: String) -> Bool {
        let bytes = Array(value.utf8)
        guard bytes.count == 22, let first = bytes.first, (UInt8(ascii: "c")...UInt8(ascii: "f")).contains(first)
        else { return false }
        return bytes.allSatisfy(isBase64URL)
    }

    /// The wire reference recommends never rejecting a token on a regex: only non-empty, no whitespace, ≤ 4 KiB.
    package static func formatProblem(_ value: String) -> String? {
        if value.isEmpty { return "a registration must not be empty" }
        if value.utf8.count > maximumLength { return "a registration must be at most \(maximumLength) bytes" }
        if value.utf8.contains(where: { $0 <= 0x20 || $0 == 0x7F || $0 >= 0x80 })
            && value.unicodeScalars.contains(where: { $0.value <= 0x20 || $0.properties.isWhitespace })
        {
            return "a registration must not contain whitespace or control characters"
        }
        return nil
    }

    package static let maximumLength = 4096

    package static func < (lhs: Registration, rhs: Registration) -> Bool { lhs.value < rhs.value }

    package var description: String { value }

    private static func isBase64URL(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"):
            return true
        default:
            return false
        }
    }
}

/// Registrations are credentials of a sort (anyone holding one can message that device), so output hides
/// most of each one unless the user asks with `--show-tokens`.
package struct Redactor: Sendable {
    package let showTokens: Bool

    package init(showTokens: Bool) { self.showTokens = showTokens }

    package func callAsFunction(_ registration: Registration) -> String { redact(registration.value) }

    package func redact(_ value: String) -> String {
        if showTokens { return value }
        let characters = Array(value)
        if characters.count <= 12 { return String(characters.prefix(4)) + "…" }
        return String(characters.prefix(6)) + "…" + String(characters.suffix(4))
    }
}
