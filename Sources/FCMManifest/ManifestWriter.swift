import FCMCore

/// Manifest entries that fcmctl writes itself (`import`): typed entries in, the canonical file out. Every
/// scalar is written double-quoted (the formatter's own `ScalarStyle`), then the formatter reads the text back and writes it
/// in canonical form (sorted, quoted only where it must be, comments kept), so what import prints is what
/// `fmt` would.
package struct ManifestWriter {
    package enum Section: String, Sendable {
        case groups
        case topics
    }

    /// A member as import writes it: a device by its name, or a registration the manifests name no device for.
    package enum Member: Sendable, Hashable {
        case device(String)
        case registration(Registration)
    }

    package struct Entry: Sendable {
        package var name: String
        /// Said after the entry's key, as a comment.
        package var comment: String?
        package var members: [Member]

        package init(name: String, comment: String?, members: [Member]) {
            self.name = name
            self.comment = comment
            self.members = members
        }
    }

    /// The file's opening comment, one line each.
    private let header: [String]
    /// The manifests' device names: a registration spelt like one is written `{token: …}`, or it would read
    /// back as that device.
    private let deviceNames: Set<String>
    private var sections: [Section: [Entry]] = [:]

    package init(header: [String], deviceNames: Set<String> = []) {
        self.header = header
        self.deviceNames = deviceNames
    }

    package mutating func add(_ entry: Entry, to section: Section) { sections[section, default: []].append(entry) }

    package var isEmpty: Bool { sections.isEmpty }

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
                lines += entry.members.map { "      - " + written($0) }
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// A registration is written bare when the loader reads it back as that registration (its shape says
    /// registration, it names no device, its kind is the one its shape implies); otherwise `{token: …}` or
    /// `{fid: …}` says what it is.
    func written(_ member: Member) -> String {
        switch member {
        case .device(let name):
            return ScalarStyle.quoted(name)
        case .registration(let registration):
            let value = registration.value
            if ManifestResolver.looksLikeRegistration(value), !deviceNames.contains(value), Registration.formatProblem(value) == nil,
                Registration(inferring: value).kind == registration.kind
            {
                return ScalarStyle.quoted(value)
            }
            return "\(registration.kind.rawValue): \(ScalarStyle.quoted(value))"
        }
    }

    /// A comment holds one line: a line break in a name would end it.
    static func oneLine(_ text: String) -> String {
        String(text.unicodeScalars.map { $0.value < 0x20 ? " " : Character($0) })
    }
}
