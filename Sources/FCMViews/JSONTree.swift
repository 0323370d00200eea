import FCMCore

/// A JSON document built in the order it should read, then written with two-space indentation. Keys keep
/// the order they were added in (each document adds them in a fixed order), so output is deterministic.
package indirect enum JSONTree: Sendable {
    case string(String)
    case int(Int)
    case bool(Bool)
    case null
    case array([JSONTree])
    case object([(String, JSONTree)])

    package static func optional(_ value: String?) -> JSONTree { value.map { .string($0) } ?? .null }

    package func serialized() -> String {
        var writer = JSONWriter(capacity: 4096)
        write(into: &writer, indent: 0)
        writer.raw("\n")
        return String(decoding: writer.bytes, as: UTF8.self)
    }

    /// One line, for event streams (JSON Lines).
    package func compact() -> String {
        var writer = JSONWriter(capacity: 256)
        write(into: &writer, indent: -1)
        return String(decoding: writer.bytes, as: UTF8.self)
    }

    /// `indent` -1 writes everything on one line.
    private func write(into out: inout JSONWriter, indent: Int) {
        switch self {
        case .string(let text): out.string(text)
        case .int(let value): out.int(value)
        case .bool(let value): value ? out.raw("true") : out.raw("false")
        case .null: out.raw("null")
        case .array(let items):
            if items.isEmpty { return out.raw("[]") }
            // Arrays of scalars stay on one line: a member list of thousands should not be thousands of lines.
            if indent < 0 || items.allSatisfy(\.isScalar) {
                out.raw("[")
                for (index, item) in items.enumerated() {
                    if index > 0 { out.raw(", ") }
                    item.write(into: &out, indent: indent)
                }
                return out.raw("]")
            }
            out.raw("[")
            for (index, item) in items.enumerated() {
                out.raw(index == 0 ? "\n" : ",\n")
                Self.pad(&out, indent + 1)
                item.write(into: &out, indent: indent + 1)
            }
            out.raw("\n")
            Self.pad(&out, indent)
            out.raw("]")
        case .object(let fields):
            if fields.isEmpty { return out.raw("{}") }
            if indent < 0 {
                out.raw("{")
                for (index, (key, value)) in fields.enumerated() {
                    if index > 0 { out.raw(",") }
                    out.string(key)
                    out.raw(":")
                    value.write(into: &out, indent: -1)
                }
                return out.raw("}")
            }
            out.raw("{")
            for (index, (key, value)) in fields.enumerated() {
                out.raw(index == 0 ? "\n" : ",\n")
                Self.pad(&out, indent + 1)
                out.string(key)
                out.raw(": ")
                value.write(into: &out, indent: indent + 1)
            }
            out.raw("\n")
            Self.pad(&out, indent)
            out.raw("}")
        }
    }

    private var isScalar: Bool {
        switch self {
        case .array, .object: false
        default: true
        }
    }

    private static func pad(_ out: inout JSONWriter, _ depth: Int) {
        for _ in 0..<depth { out.raw("  ") }
    }
}
