import FCMCore
import Foundation

/// A dry run's request line, with each registration it names redacted wherever it appears (raw in a body,
/// percent-encoded in a URL) unless `--show-tokens`. Services hand over requests as they would send them.
package struct RequestPreviewText {
    package let redactor: Redactor

    package init(redactor: Redactor) {
        self.redactor = redactor
    }

    package func line(_ request: RequestPreview) -> String {
        var text = request.line
        guard !redactor.showTokens else { return text }
        // Longest first, so a registration that contains another is replaced whole.
        for registration in request.registrations.sorted(by: { $0.utf8Count > $1.utf8Count }) {
            let redacted = redactor(registration)
            let encoded = URLComponentEncoder.encode(registration.value)
            if encoded != registration.value { text = text.replacingOccurrences(of: encoded, with: redacted) }
            text = text.replacingOccurrences(of: registration.value, with: redacted)
        }
        return text
    }
}
