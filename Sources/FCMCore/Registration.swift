import Foundation
import Synchronization

/// An app registration as FCM knows it: a legacy FCM token or a Firebase Installation ID (FID).
/// Two kinds exist because FCM is moving from tokens to FIDs (wire reference §0.4).
///
/// A registration is an interned handle: each distinct one is stored once per process (`RegistrationTable`)
/// and every set, plan, ledger and outcome holds a one-word reference to it. At a million subscriptions
/// that is what keeps memory flat (a token is about 150 bytes, and a fleet names each one in several structures)
/// and makes hashing and equality one word instead of the whole token.
package struct Registration: Hashable, Comparable, Sendable, CustomStringConvertible {
    package enum Kind: String, Sendable, Codable {
        case token
        case fid
    }

    private let entry: RegistrationTable.Entry

    package var value: String { entry.value }
    package var kind: Kind { entry.kind }

    package init(value: String, kind: Kind) {
        entry = RegistrationTable.shared.intern(value, kind)
    }

    package static func == (lhs: Registration, rhs: Registration) -> Bool { lhs.entry === rhs.entry }

    package func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(entry)) }

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

    package static let maximumLength = 4096

    /// Whether a run of text quoted in output (a source line, a URL's path segment) is a registration to redact:
    /// an FCM token (30+ characters with a ':'), a FID, or any 64+ character run.
    package static func looksLikeRegistrationInText(_ text: String) -> Bool {
        (text.count >= 30 && text.contains(":")) || text.count >= 64 || looksLikeFID(text)
    }

    package static func < (lhs: Registration, rhs: Registration) -> Bool { lhs.entry !== rhs.entry && lhs.value < rhs.value }

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
        // Registrations are ASCII, where a byte is a character (but for CR LF): sliced as bytes, not graphemes,
        // since finding grapheme boundaries costs far more per character and a plan redacts every member it prints.
        let bytes = value.utf8
        if bytes.allSatisfy({ $0 < 0x80 && $0 != 0x0D }) {
            if bytes.count <= 12 { return String(decoding: bytes.prefix(4), as: UTF8.self) + "…" }
            return String(decoding: bytes.prefix(6), as: UTF8.self) + "…" + String(decoding: bytes.suffix(4), as: UTF8.self)
        }
        let characters = Array(value)
        if characters.count <= 12 { return String(characters.prefix(4)) + "…" }
        return String(characters.prefix(6)) + "…" + String(characters.suffix(4))
    }
}

/// The process's registrations, each stored once. Entries live as long as the process: a command reads a
/// fleet once, and a handle must stay valid for as long as any value holds it.
package final class RegistrationTable: Sendable {
    package final class Entry: Sendable {
        let value: String
        let kind: Registration.Kind

        init(value: String, kind: Registration.Kind) {
            self.value = value
            self.kind = kind
        }
    }

    struct Key: Hashable {
        let value: String
        let kind: Registration.Kind
    }

    package static let shared = RegistrationTable()

    private let entries = Mutex<[Key: Entry]>([:])

    func intern(_ value: String, _ kind: Registration.Kind) -> Entry {
        let key = Key(value: value, kind: kind)
        return entries.withLock { entries in
            if let entry = entries[key] { return entry }
            let entry = Entry(value: value, kind: kind)
            entries[key] = entry
            return entry
        }
    }

    /// How many distinct registrations this process has seen.
    package var count: Int { entries.withLock { $0.count } }
}
