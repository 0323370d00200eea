/// Manifest entries that fcmctl writes itself (`import`): typed entries in, the canonical file out. Every
/// scalar is written double-quoted (the formatter's own `ScalarStyle`), then the formatter reads the text back and writes it
/// in canonical form (sorted, quoted only where it must be, comments kept), so what import prints is what
/// `fmt` would.
package struct ManifestWriter {
    package enum Section: String, Sendable {
        case groups
        case topics
    }

    package struct Entry: Sendable {
        package var name: String
        /// Said after the entry's key, as a comment.
        package var comment: String?
        package var members: [String]

        package init(name: String, comment: String?, members: [String]) {
            self.name = name
            self.comment = comment
            self.members = members
        }
    }

    /// The file's opening comment, one line each.
    private let header: [String]
    private var sections: [Section: [Entry]] = [:]

    package init(header: [String]) { self.header = header }

    package mutating func add(_ entry: Entry, to section: Section) { sections[section, default: []].append(entry) }

    /// The canonical text, or the formatter's refusal. A file of comments alone has nothing to format.
    package func formatted(file: String) throws -> String {
        sections.isEmpty ? draft : try ManifestFormatter.formatChecked(file: file, bytes: Array(draft.utf8))
    }

    var draft: String {
        var lines = header.map { "# " + Self.oneLine($0) }
        for section in [Section.groups, .topics] {
            guard let entries = sections[section] else { continue }
            lines.append(section.rawValue + ":")
            for entry in entries {
                lines.append("  \(ScalarStyle.quoted(entry.name)):" + (entry.comment.map { "  # " + Self.oneLine($0) } ?? ""))
                lines.append("    members:")
                lines += entry.members.map { "      - " + ScalarStyle.quoted($0) }
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// A comment holds one line: a line break in a name would end it.
    static func oneLine(_ text: String) -> String {
        String(text.unicodeScalars.map { $0.value < 0x20 ? " " : Character($0) })
    }
}
