import Foundation

/// A `DecodingError` said in one line a person reads: where in the document and what was expected there,
/// instead of its debug description (`DecodingError.dataCorrupted(Context(codingPath: [], …))`).
package enum DecodingProblem {
    package static func text(_ error: any Error) -> String {
        guard let error = error as? DecodingError else { return PrintableText.oneLine("\(error)") }
        switch error {
        case .dataCorrupted(let context):
            return context.codingPath.isEmpty ? "it is not JSON" : "\(place(context.codingPath)) holds a value that cannot be read"
        case .keyNotFound(let key, let context):
            return "\(place(context.codingPath + [key])) is missing"
        case .typeMismatch(let type, let context):
            return "\(place(context.codingPath)) is not \(expected(type))"
        case .valueNotFound(let type, let context):
            return "\(place(context.codingPath)) is null where \(expected(type)) is expected"
        @unknown default:
            return "it cannot be read"
        }
    }

    static func place(_ path: [any CodingKey]) -> String {
        guard !path.isEmpty else { return "the document" }
        return "'" + path.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined().drop { $0 == "." } + "'"
    }

    static func expected(_ type: Any.Type) -> String {
        switch "\(type)" {
        case "String": return "a string"
        case "Int", "Int64", "Double", "UInt64": return "a number"
        case "Bool": return "true or false"
        case let name where name.hasPrefix("Array") || name.hasPrefix("["): return "a list"
        case let name where name.hasPrefix("Dictionary"): return "an object"
        default: return "an object"
        }
    }
}
