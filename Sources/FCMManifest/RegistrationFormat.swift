import FCMCore

extension Registration {
    /// The wire reference recommends never rejecting a token on a regex: only non-empty, no whitespace, ≤ 4 KiB.
    package static func formatProblem(_ value: String) -> String? {
        if value.isEmpty { return "a registration must not be empty" }
        if value.utf8.count > maximumLength { return "a registration must be at most \(maximumLength) bytes" }
        // No token or FID is; in a request's URL path it would be a step to another resource.
        if value == "." || value == ".." { return "'\(value)' is no registration (in a request's URL path it would mean another path)" }
        if value.utf8.contains(where: { $0 <= 0x20 || $0 == 0x7F || $0 >= 0x80 })
            && value.unicodeScalars.contains(where: { $0.value <= 0x20 || (0x7F...0x9F).contains($0.value) || $0.properties.isWhitespace })
        {
            return "a registration must not contain whitespace or control characters"
        }
        return nil
    }
}
