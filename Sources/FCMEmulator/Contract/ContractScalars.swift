import Foundation

/// proto3 JSON scalars: what the converter accepts for each kind, and its complaint otherwise. Integers may be
/// numbers or strings, enums names (in any case, as Google's front end parses them) or numbers, durations
/// and timestamps only strings.
extension ContractValidator {
    mutating func scalar(_ kind: ContractSchema.Kind, _ value: ContractJSON, at location: String, name: String) -> ContractJSON? {
        let typeName: String
        switch kind {
        case .string:
            if case .string = value { return value }
            typeName = kind.fieldKindName
        case .bool:
            if case .bool = value { return value }
            if case .string(let text) = value, ["true", "false"].contains(text) { return .bool(text == "true") }
            typeName = kind.fieldKindName
        case .int32, .uint32, .int64, .uint64:
            if Self.fits(value, kind) { return value }
            typeName = kind.fieldKindName
        case .float, .double:
            if let number = Self.number(value), number.isNaN || abs(number) <= (kind.isFloat ? Double(Float.greatestFiniteMagnitude) : .infinity) {
                return value
            }
            typeName = kind.fieldKindName
        case .enumeration(let type, let values):
            if let canonical = Self.enumeration(value, values) { return canonical }
            typeName = "type.googleapis.com/" + type
        case .duration:
            guard let problem = Self.durationProblem(value) else { return value }
            invalidValue(at: location, "type.googleapis.com/google.protobuf.Duration", "Field '\(name)', \(problem)")
            return nil
        case .timestamp:
            guard let problem = Self.timestampProblem(value) else { return value }
            invalidValue(at: location, "type.googleapis.com/google.protobuf.Timestamp", "Field '\(name)', \(problem)")
            return nil
        case .message, .map, .structure, .value:
            return value
        }
        invalidValue(at: location, typeName, value.quoted)
        return nil
    }

    static let numberGrammar = #"^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$"#

    /// The numeric value of a JSON number or of a string holding one; Swift's Double(String) alone would
    /// also take "0x10", "inf" and spaces, which the converter refuses.
    static func number(_ value: ContractJSON) -> Double? {
        switch value {
        case .number(let text): return Double(text)
        case .string(let text) where ["NaN", "Infinity", "-Infinity"].contains(text):
            return Double(text.replacingOccurrences(of: "Infinity", with: "inf"))
        case .string(let text) where text.range(of: numberGrammar, options: .regularExpression) != nil: return Double(text)
        default: return nil
        }
    }

    /// An integral number: written as digits, or with a fraction or exponent that leaves no remainder.
    static func integer(_ value: ContractJSON) -> Double? {
        guard let number = number(value), number.isFinite, number.rounded() == number else { return nil }
        return number
    }

    /// Whether an integer field takes `value`: digits are parsed exactly (a Double would round int64 near
    /// its limits); other spellings of a number must be integral and in range.
    static func fits(_ value: ContractJSON, _ kind: ContractSchema.Kind) -> Bool {
        switch value {
        case .number(let text), .string(let text):
            if text.range(of: "^-?[0-9]+$", options: .regularExpression) != nil {
                switch kind {
                case .int32: return Int32(text) != nil
                case .uint32: return UInt32(text) != nil
                case .int64: return Int64(text) != nil
                default: return UInt64(text) != nil
                }
            }
        default: return false
        }
        guard let number = integer(value) else { return false }
        switch kind {
        case .int32: return number >= -0x1p31 && number < 0x1p31
        case .uint32: return number >= 0 && number < 0x1p32
        case .int64: return number >= -0x1p63 && number < 0x1p63
        default: return number >= 0 && number < 0x1p64
        }
    }

    /// The canonical name for a name in any case (with '-' for '_'), or the number kept as written: proto3
    /// enums are open, so any int32 passes.
    static func enumeration(_ value: ContractJSON, _ names: [String]) -> ContractJSON? {
        guard case .string(let text) = value else {
            return integer(value).map { $0 >= Double(Int32.min) && $0 <= Double(Int32.max) } == true ? value : nil
        }
        let folded = text.uppercased().replacingOccurrences(of: "-", with: "_")
        if names.contains(text) { return value }
        if names.contains(folded) { return .string(folded) }
        return Int32(text) != nil ? value : nil
    }

    /// google.protobuf.Duration's JSON form, `-?SECONDS(.FRACTION)?s`, within ±10,000 years.
    static func durationProblem(_ value: ContractJSON) -> String? {
        guard case .string(let text) = value else { return "Invalid data type for duration, value is \(value.quoted)" }
        guard text.hasSuffix("s") else { return "Illegal duration format; duration must end with 's'" }
        var body = text.dropLast()
        if body.hasPrefix("-") { body = body.dropFirst() }
        let parts = body.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        guard let seconds = UInt64(parts[0]), parts[0].allSatisfy(isDigit) else {
            return "Invalid duration format, failed to parse seconds"
        }
        if parts.count > 1 {
            guard parts[1].allSatisfy(isDigit), !parts[1].isEmpty else { return "Invalid duration format, failed to parse nano seconds" }
            guard parts[1].count <= 9 else { return "Duration value exceeds limits" }
        }
        return seconds > 315_576_000_000 ? "Duration value exceeds limits" : nil
    }

    static func isDigit(_ character: Character) -> Bool { character.isASCII && character.isNumber }

    /// Seconds in a duration the schema already accepted (`"3.5s"` → 3.5).
    static func seconds(ofDuration text: String) -> Double? { Double(text.dropLast()) }

    /// RFC 3339 with an upper-case `T` and a `Z` or numeric offset, as google.protobuf.Timestamp requires.
    static func timestampProblem(_ value: ContractJSON) -> String? {
        guard case .string(let text) = value else { return "Invalid data type for timestamp, value is \(value.quoted)" }
        let grammar = #"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]{1,9})?(Z|[+-][0-9]{2}:[0-9]{2})$"#
        return text.range(of: grammar, options: .regularExpression) == nil ? "Invalid time format: \(text)" : nil
    }
}

extension ContractSchema.Kind {
    var isFloat: Bool {
        if case .float = self { return true }
        return false
    }

    /// google.protobuf.Field.Kind's name, which the converter quotes for scalar fields.
    var fieldKindName: String {
        switch self {
        case .string: "TYPE_STRING"
        case .bool: "TYPE_BOOL"
        case .int32: "TYPE_INT32"
        case .uint32: "TYPE_UINT32"
        case .int64: "TYPE_INT64"
        case .uint64: "TYPE_UINT64"
        case .float: "TYPE_FLOAT"
        case .double: "TYPE_DOUBLE"
        case .enumeration: "TYPE_ENUM"
        default: "TYPE_MESSAGE"
        }
    }
}
