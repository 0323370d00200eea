/// A JSON value as read from state and journal files and FCM's small answers. Foundation's decoders were too slow for a
/// million-subscription state (a second budget), and these files need only this much.
package enum JSONValue: Sendable {
    case null
    case bool(Bool)
    case int(Int)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    package subscript(key: String) -> JSONValue? {
        if case .object(let fields) = self { return fields[key] }
        return nil
    }

    package var string: String? { if case .string(let value) = self { value } else { nil } }
    package var int: Int? { if case .int(let value) = self { value } else { nil } }
    package var bool: Bool? { if case .bool(let value) = self { value } else { nil } }
    package var array: [JSONValue]? { if case .array(let value) = self { value } else { nil } }
    package var object: [String: JSONValue]? { if case .object(let value) = self { value } else { nil } }
}

package struct JSONParseError: Error, CustomStringConvertible {
    package var offset: Int
    package var reason: String
    package var description: String { "\(reason) at byte \(offset)" }

    package init(offset: Int, reason: String) {
        self.offset = offset
        self.reason = reason
    }
}

/// A strict RFC 8259 parser over bytes. Nesting is bounded, so no input can exhaust the stack.
package struct JSONParser {
    private let bytes: UnsafeBufferPointer<UInt8>
    private var index = 0
    private var depth = 0
    package static let maximumDepth = 64

    private init(bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

    package static func parse(_ data: some Collection<UInt8>) throws -> JSONValue {
        let array = Array(data)
        return try array.withUnsafeBufferPointer { buffer in
            var parser = JSONParser(bytes: buffer)
            parser.skipWhitespace()
            let value = try parser.value()
            parser.skipWhitespace()
            guard parser.index == buffer.count else { throw parser.error("unexpected text after the value") }
            return value
        }
    }

    /// The string values of `keys` among an object's top-level fields (nil where absent or not a string).
    package static func objectStrings(_ raw: UnsafeRawBufferPointer, keys: [StaticString]) throws -> [String?] {
        var found = [String?](repeating: nil, count: keys.count)
        try visitObjectStrings(raw, keys: keys) { slot, text in found[slot] = text.map { String(decoding: $0, as: UTF8.self) } }
        return found
    }

    /// Calls `visit` with each top-level field of an object that `keys` names, in the text's order: its index in
    /// `keys` and its string's UTF-8 bytes (nil when the value is not a string). The whole text is checked as
    /// strictly as `parse` checks it, but nothing is built: FCM answers every change an apply makes with an
    /// object, and only a name in it is read.
    package static func visitObjectStrings(
        _ raw: UnsafeRawBufferPointer, keys: [StaticString], _ visit: (Int, UnsafeBufferPointer<UInt8>?) -> Void
    ) throws {
        var parser = JSONParser(bytes: raw.assumingMemoryBound(to: UInt8.self))
        parser.skipWhitespace()
        guard parser.index < parser.bytes.count, parser.bytes[parser.index] == UInt8(ascii: "{") else {
            throw parser.error("expected an object")
        }
        parser.index += 1
        parser.skipWhitespace()
        if parser.index < parser.bytes.count, parser.bytes[parser.index] == UInt8(ascii: "}") {
            parser.index += 1
        } else {
            while true {
                parser.skipWhitespace()
                guard parser.index < parser.bytes.count, parser.bytes[parser.index] == UInt8(ascii: "\"") else {
                    throw parser.error("expected a field name")
                }
                // Names and values are compared and skipped where they lie; only escaped text is made a string.
                let slot: Int?
                if let name = try parser.plainString() {
                    slot = keys.firstIndex { name.elementsEqual(UnsafeBufferPointer(start: $0.utf8Start, count: $0.utf8CodeUnitCount)) }
                } else {
                    let name = try parser.string()
                    slot = keys.firstIndex { name.utf8.elementsEqual(UnsafeBufferPointer(start: $0.utf8Start, count: $0.utf8CodeUnitCount)) }
                }
                parser.skipWhitespace()
                guard parser.index < parser.bytes.count, parser.bytes[parser.index] == UInt8(ascii: ":") else {
                    throw parser.error("expected ':'")
                }
                parser.index += 1
                parser.skipWhitespace()
                guard parser.index < parser.bytes.count else { throw parser.error("unexpected end") }
                if parser.bytes[parser.index] == UInt8(ascii: "\"") {
                    if let text = try parser.plainString() {
                        if let slot { visit(slot, text) }
                    } else {
                        var text = try parser.string()
                        if let slot { text.withUTF8 { visit(slot, $0) } }
                    }
                } else {
                    _ = try parser.value()
                    if let slot { visit(slot, nil) }
                }
                parser.skipWhitespace()
                guard parser.index < parser.bytes.count else { throw parser.error("unexpected end") }
                if parser.bytes[parser.index] == UInt8(ascii: ",") {
                    parser.index += 1
                } else if parser.bytes[parser.index] == UInt8(ascii: "}") {
                    parser.index += 1
                    break
                } else {
                    throw parser.error("expected ',' or '}'")
                }
            }
        }
        parser.skipWhitespace()
        guard parser.index == parser.bytes.count else { throw parser.error("unexpected text after the value") }
    }

    private func error(_ reason: String) -> JSONParseError { JSONParseError(offset: index, reason: reason) }

    private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x0A, 0x0D, 0x09: index += 1
            default: return
            }
        }
    }

    private mutating func value() throws -> JSONValue {
        guard index < bytes.count else { throw error("unexpected end") }
        switch bytes[index] {
        case UInt8(ascii: "{"): return try object()
        case UInt8(ascii: "["): return try array()
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"):
            try literal("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try literal("false")
            return .bool(false)
        case UInt8(ascii: "n"):
            try literal("null")
            return .null
        default: return try number()
        }
    }

    private mutating func literal(_ word: StaticString) throws {
        let count = word.utf8CodeUnitCount
        guard index + count <= bytes.count else { throw error("unexpected end") }
        for offset in 0..<count where bytes[index + offset] != word.utf8Start[offset] { throw error("unexpected character") }
        index += count
    }

    private mutating func enter() throws {
        depth += 1
        if depth > Self.maximumDepth { throw error("nested deeper than \(Self.maximumDepth) levels") }
    }

    private mutating func object() throws -> JSONValue {
        try enter()
        defer { depth -= 1 }
        index += 1
        var fields: [String: JSONValue] = [:]
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
            index += 1
            return .object(fields)
        }
        while true {
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw error("expected a field name") }
            let key = try string()
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw error("expected ':'") }
            index += 1
            skipWhitespace()
            let item = try value()
            guard fields.updateValue(item, forKey: key) == nil else { throw error("duplicate field '\(key)'") }
            skipWhitespace()
            guard index < bytes.count else { throw error("unexpected end") }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
            } else if bytes[index] == UInt8(ascii: "}") {
                index += 1
                return .object(fields)
            } else {
                throw error("expected ',' or '}'")
            }
        }
    }

    private mutating func array() throws -> JSONValue {
        try enter()
        defer { depth -= 1 }
        index += 1
        var items: [JSONValue] = []
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
            index += 1
            return .array(items)
        }
        while true {
            skipWhitespace()
            items.append(try value())
            skipWhitespace()
            guard index < bytes.count else { throw error("unexpected end") }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
            } else if bytes[index] == UInt8(ascii: "]") {
                index += 1
                return .array(items)
            } else {
                throw error("expected ',' or ']'")
            }
        }
    }

    private mutating func number() throws -> JSONValue {
        let start = index
        var negative = false
        if bytes[index] == UInt8(ascii: "-") {
            negative = true
            index += 1
        }
        var integer = 0
        var digits = 0
        var overflow = false
        while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) {
            let (times, o1) = integer.multipliedReportingOverflow(by: 10)
            let (sum, o2) = times.addingReportingOverflow(Int(bytes[index] - UInt8(ascii: "0")))
            overflow = overflow || o1 || o2
            integer = sum
            digits += 1
            index += 1
        }
        guard digits > 0 else { throw error("unexpected character") }
        var isInteger = true
        while index < bytes.count,
            [UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E"), UInt8(ascii: "+"), UInt8(ascii: "-")]
                .contains(bytes[index]) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index])
        {
            isInteger = false
            index += 1
        }
        if isInteger && !overflow { return .int(negative ? -integer : integer) }
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
        guard let double = Double(text) else { throw JSONParseError(offset: start, reason: "not a number") }
        return .double(double)
    }

    /// The bytes of the string at `index` when it has no escape, `index` moved past it; nil, `index` unmoved,
    /// when it has one (`string()` reads those).
    private mutating func plainString() throws -> UnsafeBufferPointer<UInt8>? {
        var at = index + 1
        while at < bytes.count {
            let byte = bytes[at]
            if byte == UInt8(ascii: "\"") {
                defer { index = at + 1 }
                return UnsafeBufferPointer(rebasing: bytes[(index + 1)..<at])
            }
            if byte == UInt8(ascii: "\\") { return nil }
            if byte < 0x20 {
                index = at
                throw error("control character in a string")
            }
            at += 1
        }
        index = at
        throw error("unterminated string")
    }

    private mutating func string() throws -> String {
        index += 1
        let start = index
        // Fast path: no escapes, which is every registration and topic name fcmctl writes.
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
                index += 1
                return text
            }
            if byte == UInt8(ascii: "\\") { break }
            if byte < 0x20 { throw error("control character in a string") }
            index += 1
        }
        var scalars = Array(UnsafeBufferPointer(rebasing: bytes[start..<index]))
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                return String(decoding: scalars, as: UTF8.self)
            case UInt8(ascii: "\\"):
                index += 1
                guard index < bytes.count else { throw error("unexpected end") }
                let escaped = bytes[index]
                index += 1
                switch escaped {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): scalars.append(escaped)
                case UInt8(ascii: "b"): scalars.append(0x08)
                case UInt8(ascii: "f"): scalars.append(0x0C)
                case UInt8(ascii: "n"): scalars.append(0x0A)
                case UInt8(ascii: "r"): scalars.append(0x0D)
                case UInt8(ascii: "t"): scalars.append(0x09)
                case UInt8(ascii: "u"):
                    var code = try hex4()
                    if (0xD800..<0xDC00).contains(code), index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"),
                        bytes[index + 1] == UInt8(ascii: "u")
                    {
                        index += 2
                        let low = try hex4()
                        // Only a low surrogate completes the pair: anything else is refused, never computed with
                        // (below DC00 the subtraction would overflow and stop the process, on text FCM sent).
                        guard (0xDC00...0xDFFF).contains(low) else { throw error("invalid \\u escape") }
                        code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                    }
                    guard let scalar = Unicode.Scalar(code) else { throw error("invalid \\u escape") }
                    scalars.append(contentsOf: Array(String(Character(scalar)).utf8))
                default: throw error("invalid escape")
                }
            default:
                if byte < 0x20 { throw error("control character in a string") }
                scalars.append(byte)
                index += 1
            }
        }
        throw error("unterminated string")
    }

    private mutating func hex4() throws -> UInt32 {
        guard index + 4 <= bytes.count else { throw error("unexpected end") }
        var code: UInt32 = 0
        for _ in 0..<4 {
            guard let digit = UInt32(String(UnicodeScalar(bytes[index])), radix: 16) else { throw error("invalid \\u escape") }
            code = code * 16 + digit
            index += 1
        }
        return code
    }
}
