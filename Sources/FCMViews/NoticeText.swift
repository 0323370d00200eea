import FCMCore

/// A notice as its stderr line, the way compilers and linters print theirs: `error: …`, `warning: …`,
/// `note: …`, with `path:line:col: ` first when it has a place in a manifest; a line of information as it
/// is. Text from outside is shown escaped (`PrintableText`).
package enum NoticeText {
    package static func line(_ notice: Notice) -> String {
        var text = notice.severity == .info ? notice.message : "\(notice.severity.rawValue): \(notice.message)"
        if let location = notice.location { text = "\(location.file):\(location.line):\(location.column): " + text }
        return PrintableText.lines(text)
    }
}

extension Console {
    /// Says a notice: its line on stderr now, and the value to the run's record, from which the error
    /// document is rendered if the run fails before its own.
    package func say(_ notice: Notice) {
        record?.record(notice)
        err(NoticeText.line(notice))
    }
}
