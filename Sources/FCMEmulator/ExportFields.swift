import Foundation

/// Reading one value of a parsed export as the format says it must be, or a `ReadError` naming where it is
/// (`groups[3].members`) and what it is instead. Never traps: JSONSerialization hands back NSNumber for
/// numbers and booleans alike, and a plain `as? Int` would take `true` for 1 and overflow no check.
enum ExportFields {
    typealias ReadError = StateExport.ReadError

    /// What a JSON value is, for a message: "a string", "an array of 3"…
    static func describe(_ value: Any) -> String {
        switch value {
        case is NSNull: return "null"
        case is String: return "a string"
        case is [Any]: return "an array"
        case is [String: Any]: return "an object"
        case let number as NSNumber: return isBoolean(number) ? "\(number.boolValue)" : "the number \(number.stringValue)"
        default: return "a \(type(of: value))"
        }
    }

    /// JSON's true and false: NSNumber's "c" (char) type, which no JSON number is read as.
    static func isBoolean(_ number: NSNumber) -> Bool { String(cString: number.objCType) == "c" }

    static func object(_ value: Any, at path: String, fields: Set<String>) throws(ReadError) -> [String: Any] {
        guard let object = value as? [String: Any] else { throw ReadError("\(path): \(describe(value)), expected an object") }
        if let unknown = object.keys.filter({ !fields.contains($0) }).sorted().first {
            throw ReadError(
                "\(at(path, key: unknown)): not a field of the export format (\(path.isEmpty ? "the document" : path) has \(fields.sorted().joined(separator: ", ")))"
            )
        }
        return object
    }

    /// An object whose keys are data (senders, topics): any keys.
    static func map(_ value: Any, at path: String) throws(ReadError) -> [String: Any] {
        guard let object = value as? [String: Any] else { throw ReadError("\(path): \(describe(value)), expected an object") }
        return object
    }

    static func array(_ value: Any, at path: String) throws(ReadError) -> [Any] {
        guard let array = value as? [Any] else { throw ReadError("\(path): \(describe(value)), expected an array") }
        return array
    }

    static func string(_ value: Any, at path: String, nonEmpty: Bool = false) throws(ReadError) -> String {
        guard let text = value as? String else { throw ReadError("\(path): \(describe(value)), expected a string") }
        if nonEmpty && text.isEmpty { throw ReadError("\(path): empty, expected a non-empty string") }
        return text
    }

    static func bool(_ value: Any, at path: String) throws(ReadError) -> Bool {
        guard let number = value as? NSNumber, isBoolean(number) else { throw ReadError("\(path): \(describe(value)), expected true or false") }
        return number.boolValue
    }

    /// A whole number in `range`; fractions, booleans and numbers beyond it are refused with the range.
    static func integer(_ value: Any, at path: String, in range: ClosedRange<Int>) throws(ReadError) -> Int {
        let expected = "expected a whole number from \(range.lowerBound) to \(range.upperBound)"
        guard let number = value as? NSNumber, !isBoolean(number) else { throw ReadError("\(path): \(describe(value)), \(expected)") }
        if ["d", "f"].contains(String(cString: number.objCType)), number.doubleValue.rounded(.towardZero) != number.doubleValue {
            throw ReadError("\(path): \(number.stringValue) is not a whole number, \(expected)")
        }
        // Beyond UInt64 JSONSerialization gives an NSDecimalNumber, beyond Int64 a "Q": neither is an Int.
        guard !(number is NSDecimalNumber), let integer = number as? Int, range.contains(integer) else {
            throw ReadError("\(path): \(number.stringValue) is out of range, \(expected)")
        }
        return integer
    }

    static func time(_ value: Any, at path: String) throws(ReadError) -> Date {
        guard let text = value as? String else { throw ReadError("\(path): \(describe(value)), expected an RFC 3339 time") }
        guard let date = Timestamp.parse(text) else { throw ReadError("\(path): \(Quoted.text(text)) is not an RFC 3339 time") }
        return date
    }

    /// `registrations[0].topics` + `"news"` → `registrations[0].topics."news"`, the key quoted so that a
    /// hostile one prints as text.
    static func at(_ path: String, key: String) -> String {
        let quoted = Quoted.text(key)
        return path.isEmpty ? quoted : "\(path).\(quoted)"
    }
}
