import Foundation

/// The inspector's registration search, `q=` of `GET /emulator/v1/registrations`: words separated by
/// spaces, all of which must match. A bare word matches part of the token or FID, the app, the project or a
/// topic name, ignoring ASCII case; `token:`, `fid:`, `app:` and `topic:` look only there (`token:` and
/// `fid:` also only at that kind), `project:` and `platform:` want the whole value.
struct RegistrationQuery: Sendable {
    enum Term: Sendable {
        case anywhere(SearchText)
        case id(SearchText, kind: String?)
        case app(SearchText)
        case topic(SearchText)
        case project(String)
        case platform(String)
    }

    var terms: [Term] = []

    init(_ text: String, project: String? = nil) {
        for word in text.split(whereSeparator: \.isWhitespace) {
            let parts = word.split(separator: ":", maxSplits: 1)
            let value = parts.count == 2 ? String(parts[1]) : ""
            switch parts.count == 2 ? parts[0].lowercased() : "" {
            case "token": terms.append(.id(SearchText(value), kind: "token"))
            case "fid": terms.append(.id(SearchText(value), kind: "fid"))
            case "id": terms.append(.id(SearchText(value), kind: nil))
            case "app": terms.append(.app(SearchText(value)))
            case "topic": terms.append(.topic(SearchText(value)))
            case "project": terms.append(.project(value))
            case "platform": terms.append(.platform(value.uppercased()))
            // Tokens hold colons (`fGw0qy4TGgk:APA91b…`): a word with an unknown prefix is searched whole.
            default: terms.append(.anywhere(SearchText(String(word))))
            }
        }
        if let project { terms.append(.project(project)) }
    }

    /// The first `topic:` term: a registration must be subscribed to a topic it matches.
    var topicNeedle: SearchText? {
        for case .topic(let text) in terms { return text }
        return nil
    }

    func matches(id: String, _ record: EmulatorStore.RegistrationRecord) -> Bool {
        terms.allSatisfy { term in
            switch term {
            case .anywhere(let text):
                text.found(in: id) || text.found(in: record.app) || text.found(in: record.project ?? "")
                    || record.topics.keys.contains(where: text.found)
            case .id(let text, let kind): (kind == nil || record.kind == kind) && text.found(in: id)
            case .app(let text): text.found(in: record.app)
            case .topic(let text): record.topics.keys.contains(where: text.found)
            case .project(let name): (record.project ?? "") == name
            case .platform(let name): record.platform.uppercased() == name
            }
        }
    }
}

/// A case-insensitive (ASCII) substring search on UTF-8 bytes: a search runs over every registration and
/// every subscription, a million strings, where Foundation's `range(of:options:)` would take seconds.
struct SearchText: Sendable {
    let needle: [UInt8]

    init(_ text: String) { needle = text.utf8.map(Self.lower) }

    var isEmpty: Bool { needle.isEmpty }

    static func lower(_ byte: UInt8) -> UInt8 { byte >= 65 && byte <= 90 ? byte + 32 : byte }

    func found(in text: String) -> Bool {
        if needle.isEmpty { return true }
        var text = text
        return text.withUTF8 { haystack in
            guard haystack.count >= needle.count else { return false }
            let first = needle[0]
            var start = 0
            while start <= haystack.count - needle.count {
                if Self.lower(haystack[start]) == first {
                    var offset = 1
                    while offset < needle.count, Self.lower(haystack[start + offset]) == needle[offset] { offset += 1 }
                    if offset == needle.count { return true }
                }
                start += 1
            }
            return false
        }
    }
}
