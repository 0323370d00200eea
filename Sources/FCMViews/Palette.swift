/// ANSI colours for the text views; `.plain` leaves text untouched.
package struct Palette: Sendable {
    package let enabled: Bool

    package static let plain = Palette(enabled: false)
    package static let ansi = Palette(enabled: true)

    package func green(_ text: String) -> String { paint(text, "32") }
    package func red(_ text: String) -> String { paint(text, "31") }
    package func yellow(_ text: String) -> String { paint(text, "33") }
    package func bold(_ text: String) -> String { paint(text, "1") }

    private func paint(_ text: String, _ code: String) -> String { enabled ? "\u{1B}[\(code)m\(text)\u{1B}[0m" : text }
}
