import FCMCore

/// Names and labels are printed in every output (text, Markdown, GitHub workflow commands), so none may hold
/// a control character: a quoted CSV name or a JSON Lines `\n` could otherwise start a line of its own that the
/// runner reads as `::error::…` or `::add-mask::…`, or send ESC and BEL to a terminal. An export that puts one
/// there is broken; the error shows the character escaped, never raw.
enum ControlCharacterRule: ManifestRule {
    static func check(_ context: RuleContext) -> [Diagnostic] {
        var diagnostics: [Diagnostic] = []
        let devices = context.manifest.devices.sortedByName()
        // Each distinct label set is looked at once; only devices with a flawed one, or a name beyond
        // printable ASCII, are looked at one by one.
        let flawedSets = devices.labelSets.map { labels in
            labels.sorted(by: { $0.key < $1.key }).compactMap { key, value in (control(in: key) ?? control(in: value)).map { (key, value, $0) } }
        }
        for position in 0..<devices.count {
            let flaws = flawedSets[devices.labelSet(at: position)]
            if flaws.isEmpty && devices.nameIsPlainASCII(at: position) { continue }
            let name = devices.name(at: position)
            let location = devices.location(at: position)
            if let found = control(in: name) {
                diagnostics.append(.error("a device name holds the control character \(found): \(visible(name))", at: location))
            }
            for (key, value, found) in flaws {
                diagnostics.append(
                    .error("device/\(visible(name)): the label \(visible(key))=\(visible(value)) holds the control character \(found)", at: location))
            }
        }
        for group in context.manifest.groups.values.sorted(by: { $0.name < $1.name }) {
            if let found = control(in: group.name) {
                diagnostics.append(.error("a group name holds the control character \(found): \(visible(group.name))", at: group.location))
            }
        }
        return diagnostics
    }

    /// The first control character (C0, DEL, C1, and the line and paragraph separators), as `U+001B`.
    static func control(in text: String) -> String? {
        text.unicodeScalars.first(where: isControl).map { "U+" + String($0.value, radix: 16, uppercase: true).leftPadded(to: 4) }
    }

    static func isControl(_ scalar: Unicode.Scalar) -> Bool { PrintableText.isControl(scalar) }

    /// The text with each control character as `\u{1B}`, so the message itself is safe to print.
    static func visible(_ text: String) -> String { PrintableText.oneLine(text) }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String { count >= width ? self : String(repeating: "0", count: width - count) + self }
}
