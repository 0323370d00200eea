import FCMCore

/// Why a file was not formatted. Comments are never dropped: a file whose comments cannot be placed
/// faithfully is refused, with the reason.
package struct FormatRefusal: Error, Sendable, CustomStringConvertible {
    package var file: String
    package var line: Int
    package var reason: String

    package var description: String { "\(file):\(line):1: error: fmt cannot rewrite this file: \(reason)" }
}

/// Rewrites one manifest file in canonical form: block style with two-space indentation, fixed keys in
/// schema order, names and member lists sorted, scalars quoted only when they must be, comments kept.
package struct ManifestFormatter {
    let file: String
    let bytes: [UInt8]
    let root: YAMLNode
    private var leading: [SourceLocation: [String]] = [:]
    private var trailing: [SourceLocation: String] = [:]
    private var header: [String] = []
    private var footer: [String] = []
    private var documentStart = false
    private var emittedComments = 0
    private var totalComments = 0

    /// `document` must come from a file that loaded without errors.
    package init(file: String, bytes: [UInt8], document: YAMLDocument) throws {
        guard let root = document.root else { throw FormatRefusal(file: file, line: 1, reason: "the file is empty") }
        if document.usesAnchors {
            throw FormatRefusal(file: file, line: 1, reason: "it uses anchors or aliases, which fmt would have to expand; format it by hand")
        }
        self.file = file
        self.bytes = bytes
        self.root = root
        try placeComments()
    }

    // MARK: Comments

    static func isBlockScalarLine(_ line: Substring) -> Bool {
        let trimmed = line.split(separator: "#", maxSplits: 1).first.map { $0.trimmingSpaces } ?? ""
        guard let last = trimmed.split(separator: " ").last else { return false }
        return last.first == "|" || last.first == ">"
    }

    mutating func placeComments() throws {
        let text = String(decoding: bytes, as: UTF8.self)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        var documentStartLine = 0
        for (index, line) in lines.enumerated() {
            let content = line.trimmingSpaces
            if content == "---" || content.hasPrefix("--- ") {
                if documentStartLine != 0
                    || index > 0 && !lines[..<index].allSatisfy({ $0.trimmingSpaces.isEmpty || $0.trimmingSpaces.hasPrefix("#") })
                {
                    throw FormatRefusal(file: file, line: index + 1, reason: "a document marker in the middle of the file")
                }
                documentStartLine = index + 1
                documentStart = true
            } else if content == "..." || content.hasPrefix("%") {
                throw FormatRefusal(file: file, line: index + 1, reason: "YAML directives and document end markers are not supported")
            } else if Self.isBlockScalarLine(line) && line.contains(":") {
                throw FormatRefusal(
                    file: file, line: index + 1, reason: "block scalars (| or >) are not supported; write the value as a quoted string")
            }
        }
        var entries: [SourceLocation] = []
        var scalarsByLine: [Int: [SourceLocation]] = [:]
        collect(root, entries: &entries, scalars: &scalarsByLine)
        entries.sort()
        let comments = CommentScanner.scan(bytes)
        totalComments = comments.count
        // Comments above the first entry are the file's header (the schema modeline, a description): they
        // stay at the top whatever fmt reorders.
        let firstEntryLine = entries.first?.line ?? Int.max
        for comment in comments {
            if comment.line < documentStartLine || comment.ownLine && comment.line < firstEntryLine {
                header.append(comment.text)
            } else if comment.ownLine {
                if let next = entries.first(where: { $0.line > comment.line }) {
                    leading[next, default: []].append(comment.text)
                } else {
                    footer.append(comment.text)
                }
            } else if let target = scalarsByLine[comment.line]?.max(by: { $0.column < $1.column }), trailing[target] == nil {
                trailing[target] = comment.text
            } else {
                throw FormatRefusal(
                    file: file, line: comment.line, reason: "the comment at line \(comment.line) follows no value fmt can keep it with")
            }
        }
    }

    /// Entries (pairs by their key, list items by their node) take leading comments; scalars take trailing ones.
    func collect(_ node: YAMLNode, entries: inout [SourceLocation], scalars: inout [Int: [SourceLocation]]) {
        switch node.value {
        case .scalar:
            scalars[node.location.line, default: []].append(node.location)
        case .sequence(let items):
            for item in items {
                entries.append(item.location)
                collect(item, entries: &entries, scalars: &scalars)
            }
        case .mapping(let pairs):
            for pair in pairs {
                entries.append(pair.key.location)
                collect(pair.key, entries: &entries, scalars: &scalars)
                collect(pair.value, entries: &entries, scalars: &scalars)
            }
        }
    }

    // MARK: Emission

    package mutating func format() throws -> String {
        var out: [String] = header
        if documentStart { out.append("---") }
        var consumed = Set<SourceLocation>()
        emitMapping(root, indent: 0, path: [], out: &out, consumed: &consumed)
        out += footer
        emittedComments =
            header.count + footer.count + consumed.reduce(0) { $0 + (leading[$1]?.count ?? 0) }
            + trailing.count
        if emittedComments != totalComments {
            throw FormatRefusal(file: file, line: 1, reason: "\(totalComments - emittedComments) comment(s) could not be placed")
        }
        return out.joined(separator: "\n") + "\n"
    }

    func comments(before location: SourceLocation, indent: String, out: inout [String], consumed: inout Set<SourceLocation>) {
        guard !consumed.contains(location) else { return }
        consumed.insert(location)
        for text in leading[location] ?? [] { out.append(indent + text) }
    }

    func suffix(_ location: SourceLocation) -> String {
        trailing[location].map { "  " + $0 } ?? ""
    }

    func emitMapping(_ node: YAMLNode, indent: Int, path: [String], out: inout [String], consumed: inout Set<SourceLocation>) {
        guard case .mapping(let pairs) = node.value else { return }
        let pad = String(repeating: " ", count: indent)
        for pair in CanonicalOrder.pairs(pairs, path: path) {
            comments(before: pair.key.location, indent: pad, out: &out, consumed: &consumed)
            let key = ScalarStyle.render(pair.key.scalar ?? "")
            let childPath = path + [pair.key.scalar ?? ""]
            emitValue(
                pair.value, prefix: pad + key + ":", keySuffix: suffix(pair.key.location), indent: indent, path: childPath, out: &out,
                consumed: &consumed)
        }
    }

    /// Writes `prefix` followed by the value: inline for scalars and empty collections, nested otherwise.
    func emitValue(
        _ value: YAMLNode, prefix: String, keySuffix: String, indent: Int, path: [String], out: inout [String],
        consumed: inout Set<SourceLocation>
    ) {
        switch value.value {
        case .scalar(let text, let plain):
            let rendered = value.isNull ? "" : " " + ScalarStyle.render(text, plain: plain)
            out.append(prefix + rendered + (keySuffix.isEmpty ? suffix(value.location) : keySuffix))
        case .mapping(let pairs) where pairs.isEmpty:
            out.append(prefix + " {}" + keySuffix + suffix(value.location))
        case .sequence(let items) where items.isEmpty:
            out.append(prefix + " []" + keySuffix + suffix(value.location))
        case .mapping:
            out.append(prefix + keySuffix)
            emitMapping(value, indent: indent + 2, path: path, out: &out, consumed: &consumed)
        case .sequence:
            out.append(prefix + keySuffix)
            emitSequence(value, indent: indent + 2, path: path, out: &out, consumed: &consumed)
        }
    }

    func emitSequence(_ node: YAMLNode, indent: Int, path: [String], out: inout [String], consumed: inout Set<SourceLocation>) {
        guard case .sequence(let items) = node.value else { return }
        let pad = String(repeating: " ", count: indent)
        for item in CanonicalOrder.items(items, path: path) {
            comments(before: item.location, indent: pad, out: &out, consumed: &consumed)
            switch item.value {
            case .mapping(let pairs) where !pairs.isEmpty:
                // The first pair shares the dash's line; the rest align under it.
                var nested: [String] = []
                emitMapping(item, indent: indent + 2, path: path + ["[]"], out: &nested, consumed: &consumed)
                if let first = nested.firstIndex(where: { !$0.trimmingSpaces.hasPrefix("#") }) {
                    nested[first] = pad + "- " + nested[first].dropFirst(indent + 2)
                }
                out += nested
            default:
                emitValue(item, prefix: pad + "-", keySuffix: "", indent: indent, path: path + ["[]"], out: &out, consumed: &consumed)
            }
        }
    }
}

extension StringProtocol {
    var trimmingSpaces: String {
        var text = Substring(self)
        while let first = text.first, first == " " || first == "\t" || first == "\r" { text.removeFirst() }
        while let last = text.last, last == " " || last == "\t" || last == "\r" { text.removeLast() }
        return String(text)
    }
}

extension ManifestFormatter {
    /// Formats and proves the result means the same: both texts are read back and compared with
    /// order-insensitive structure (fmt only reorders keys and set-like lists), so a formatter bug can
    /// never silently change a manifest.
    package static func formatChecked(file: String, bytes: [UInt8], reader: YAMLReader = YAMLReader()) throws -> String {
        // The formatter writes the tree back: devices read as they stream by would not be in it.
        var reader = reader
        reader.streamsDevices = false
        let original = reader.readDocument(bytes, file: file)
        var formatter = try ManifestFormatter(file: file, bytes: bytes, document: original)
        let text = try formatter.format()
        let reread = reader.readDocument(Array(text.utf8), file: file)
        guard let before = original.root, let after = reread.root, !reread.diagnostics.hasErrors,
            before.structuralKey == after.structuralKey
        else {
            throw FormatRefusal(
                file: file, line: 1, reason: "the canonical form would not read back the same (a bug in fmt); the file was left alone")
        }
        return text
    }
}

extension YAMLNode {
    /// A description that ignores order and source positions: equal for trees with the same meaning.
    var structuralKey: String {
        switch value {
        case .scalar(let text, let plain):
            if isNull { return "~" }
            // Plain true/false are booleans to fcmctl; quoted ones are strings: keep them apart.
            if plain && (text == "true" || text == "false") { return "b:" + text }
            return "s" + String(text.utf8.count) + ":" + text
        case .sequence(let items): return "[" + items.map(\.structuralKey).sorted().joined(separator: ",") + "]"
        case .mapping(let pairs):
            return "{" + pairs.map { $0.key.structuralKey + "=" + $0.value.structuralKey }.sorted().joined(separator: ",") + "}"
        }
    }
}
