import FCMCore

/// Topic names must match `[a-zA-Z0-9-_.~%]{1,900}`, the intersection of the legacy and v1 APIs' rules
/// (wire reference §7). A leading `/topics/` is the legacy spelling: accepted, stripped and noted.
enum TopicNameRule: ManifestRule {
    static let legacyPrefix = "/topics/"
    static let maximumLength = 900

    static func normalized(_ name: String) -> String {
        name.hasPrefix(legacyPrefix) ? String(name.dropFirst(legacyPrefix.count)) : name
    }

    static func isValid(_ name: String) -> Bool {
        let bytes = name.utf8
        return (1...maximumLength).contains(bytes.count) && bytes.allSatisfy(isAllowed)
    }

    static func isAllowed(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."),
            UInt8(ascii: "~"), UInt8(ascii: "%"):
            return true
        default:
            return false
        }
    }

    static func check(_ context: RuleContext) -> [Diagnostic] {
        var diagnostics: [Diagnostic] = []
        for topic in context.manifest.topics.values.sorted(by: { $0.name < $1.name }) {
            let name = normalized(topic.name)
            if name != topic.name {
                diagnostics.append(
                    .init(.note, "topic '\(topic.name)' is read as '\(name)': the v1 API takes names without '/topics/'", at: topic.location))
            }
            if name == "." || name == ".." {
                // FCM's pattern allows it, but the v1 API's delete names the topic in its URL path, where a segment of
                // dots is a step to another resource (curl, like any URL parser, resolves it before sending).
                diagnostics.append(
                    .error(
                        "topic name '\(name)' cannot be used: the v1 API names the topic in a request's URL path, where '\(name)' "
                            + "means another path; rename the topic", at: topic.location))
            } else if !isValid(name) {
                diagnostics.append(
                    .error(
                        "invalid topic name '\(name)': use 1 to \(maximumLength) characters from "
                            + "a-z A-Z 0-9 - _ . ~ %", at: topic.location))
            }
        }
        return diagnostics
    }
}
