import FCMCore

/// Prints diagnostics the way compilers do: the headline, the offending source line, and a caret.
struct DiagnosticPrinter {
    let sources: [String: [UInt8]]

    func render(_ diagnostic: Diagnostic) -> String {
        var text = diagnostic.headline
        guard let location = diagnostic.location, let line = sourceLine(location) else { return text }
        let prefix = line.prefix(max(0, location.column - 1)).map { $0 == "\t" ? "\t" : " " }.joined()
        text += "\n    \(line)\n    \(prefix)^"
        return text
    }

    func sourceLine(_ location: SourceLocation) -> String? {
        guard let bytes = sources[location.file], location.line >= 1 else { return nil }
        var current = 1
        var start = bytes.startIndex
        while current < location.line {
            guard let newline = bytes[start...].firstIndex(of: UInt8(ascii: "\n")) else { return nil }
            start = newline + 1
            current += 1
        }
        let end = bytes[start...].firstIndex(of: UInt8(ascii: "\n")) ?? bytes.endIndex
        let line = String(decoding: bytes[start..<end].prefix(400), as: UTF8.self)
        return line.hasSuffix("\r") ? String(line.dropLast()) : line
    }
}
