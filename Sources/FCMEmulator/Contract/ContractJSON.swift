import Foundation

/// A JSON value as Google's proto3 JSON front end sees it. Members keep the order they were written in,
/// because Google reports violations in that order and numbers map entries by position (`data[0].value`);
/// numbers keep their text, because int64 must not pass through a Double and errors quote values as written.
indirect enum ContractJSON: Sendable {
    case object([(key: String, value: ContractJSON)])
    case array([ContractJSON])
    case string(String)
    case number(String)
    case bool(Bool)
    case null

    /// A member by name; the last occurrence wins, as the discovery document says of repeated keys.
    subscript(key: String) -> ContractJSON? {
        guard case .object(let members) = self else { return nil }
        return members.last { $0.key == key }?.value
    }

    var string: String? {
        if case .string(let text) = self { return text }
        return nil
    }

    var members: [(key: String, value: ContractJSON)] {
        if case .object(let members) = self { return members }
        return []
    }

    /// The value as Google's errors quote it: strings in double quotes, other scalars as written.
    var quoted: String {
        switch self {
        case .string(let text): "\"\(text)\""
        case .number(let text): text
        case .bool(let flag): flag ? "true" : "false"
        case .null: "null"
        case .object, .array: ""
        }
    }

    static func parse(_ data: Data) -> ContractJSON? {
        var parser = ContractJSONParser(bytes: Array(data))
        guard let value = parser.value(depth: 0) else { return nil }
        parser.skipSpace()
        return parser.index == parser.bytes.count ? value : nil
    }
}

/// RFC 8259 without extensions; nil on any syntax error (the caller then answers as for unparsable JSON).
private struct ContractJSONParser {
    let bytes: [UInt8]
    var index = 0
    /// Deeper bodies are refused rather than recursed into; no FCM message nests anywhere near this.
    static let maximumDepth = 64
    static let space: Set<UInt8> = [0x20, 0x09, 0x0A, 0x0D]
    static let numberBytes = Set("+-0123456789.eE".utf8)
    static let escapes: [UInt8: UInt8] = [
        UInt8(ascii: "\""): 0x22, UInt8(ascii: "\\"): 0x5C, UInt8(ascii: "/"): 0x2F, UInt8(ascii: "b"): 0x08,
        UInt8(ascii: "f"): 0x0C, UInt8(ascii: "n"): 0x0A, UInt8(ascii: "r"): 0x0D, UInt8(ascii: "t"): 0x09,
    ]

    mutating func skipSpace() {
        while index < bytes.count, Self.space.contains(bytes[index]) { index += 1 }
    }

    mutating func value(depth: Int) -> ContractJSON? {
        skipSpace()
        guard index < bytes.count, depth < Self.maximumDepth else { return nil }
        switch bytes[index] {
        case UInt8(ascii: "{"): return object(depth: depth)
        case UInt8(ascii: "["): return array(depth: depth)
        case UInt8(ascii: "\""): return string().map(ContractJSON.string)
        case UInt8(ascii: "t"): return literal("true", .bool(true))
        case UInt8(ascii: "f"): return literal("false", .bool(false))
        case UInt8(ascii: "n"): return literal("null", .null)
        default: return number()
        }
    }

    mutating func literal(_ word: String, _ value: ContractJSON) -> ContractJSON? {
        let expected = Array(word.utf8)
        guard bytes.count - index >= expected.count, Array(bytes[index..<index + expected.count]) == expected else { return nil }
        index += expected.count
        return value
    }

    mutating func object(depth: Int) -> ContractJSON? {
        index += 1
        var members: [(key: String, value: ContractJSON)] = []
        skipSpace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
            index += 1
            return .object(members)
        }
        while true {
            skipSpace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\""), let key = string() else { return nil }
            skipSpace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { return nil }
            index += 1
            guard let member = value(depth: depth + 1) else { return nil }
            members.append((key, member))
            skipSpace()
            guard index < bytes.count else { return nil }
            index += 1
            if bytes[index - 1] == UInt8(ascii: "}") { return .object(members) }
            guard bytes[index - 1] == UInt8(ascii: ",") else { return nil }
        }
    }

    mutating func array(depth: Int) -> ContractJSON? {
        index += 1
        var items: [ContractJSON] = []
        skipSpace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
            index += 1
            return .array(items)
        }
        while true {
            guard let item = value(depth: depth + 1) else { return nil }
            items.append(item)
            skipSpace()
            guard index < bytes.count else { return nil }
            index += 1
            if bytes[index - 1] == UInt8(ascii: "]") { return .array(items) }
            guard bytes[index - 1] == UInt8(ascii: ",") else { return nil }
        }
    }

    mutating func number() -> ContractJSON? {
        let start = index
        while index < bytes.count, Self.numberBytes.contains(bytes[index]) { index += 1 }
        let text = String(decoding: bytes[start..<index], as: UTF8.self)
        // The JSON number grammar: no leading '+', no leading zeros, digits on both sides of '.'.
        let grammar = #"^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$"#
        return text.range(of: grammar, options: .regularExpression) != nil ? .number(text) : nil
    }

    mutating func string() -> String? {
        index += 1
        var out: [UInt8] = []
        while index < bytes.count {
            let byte = bytes[index]
            index += 1
            switch byte {
            case UInt8(ascii: "\""): return String(validating: out, as: UTF8.self)
            case 0..<0x20: return nil
            case UInt8(ascii: "\\"):
                guard index < bytes.count else { return nil }
                let escape = bytes[index]
                index += 1
                if let plain = Self.escapes[escape] {
                    out.append(plain)
                } else if escape == UInt8(ascii: "u"), let scalar = unicodeEscape() {
                    out += Array(String(Character(scalar)).utf8)
                } else {
                    return nil
                }
            default: out.append(byte)
            }
        }
        return nil
    }

    /// `\uXXXX`, joining a surrogate pair written as two escapes; a lone surrogate is refused.
    mutating func unicodeEscape() -> Unicode.Scalar? {
        guard let high = hex4() else { return nil }
        if (0xD800..<0xDC00).contains(high) {
            guard bytes.count - index >= 2, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else { return nil }
            index += 2
            guard let low = hex4(), (0xDC00..<0xE000).contains(low) else { return nil }
            return Unicode.Scalar(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00))
        }
        return Unicode.Scalar(high)
    }

    mutating func hex4() -> UInt32? {
        guard bytes.count - index >= 4 else { return nil }
        var value: UInt32 = 0
        for byte in bytes[index..<index + 4] {
            guard let digit = EmulatorRequest.hexValue(byte) else { return nil }
            value = value << 4 | UInt32(digit)
        }
        index += 4
        return value
    }
}
