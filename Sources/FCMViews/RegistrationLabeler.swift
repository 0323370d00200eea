import FCMCore

/// How a registration is named in output: the device name when the manifest gives one, always redacted
/// unless `--show-tokens`.
package struct RegistrationLabeler: Sendable {
    package let redactor: Redactor
    package var deviceNames: [Registration: String] = [:]

    package init(redactor: Redactor, deviceNames: [Registration: String] = [:]) {
        self.redactor = redactor
        self.deviceNames = deviceNames
    }

    /// Names come from device exports and the state: the manifest rules refuse control characters in them,
    /// and what reaches output is made printable here too, whatever its way in.
    package func label(_ registration: Registration) -> String {
        let shown = PrintableText.oneLine(redactor(registration))
        return deviceNames[registration].map { "\(PrintableText.oneLine($0)) (\(shown))" } ?? shown
    }

    /// The device name alone, for documents that carry the registration beside it.
    package func name(_ registration: Registration) -> String? { deviceNames[registration].map(PrintableText.oneLine) }
}
