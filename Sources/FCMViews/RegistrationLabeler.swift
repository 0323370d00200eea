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

    package func label(_ registration: Registration) -> String {
        deviceNames[registration].map { "\($0) (\(redactor(registration)))" } ?? redactor(registration)
    }

    /// The device name alone, for documents that carry the registration beside it.
    package func name(_ registration: Registration) -> String? { deviceNames[registration] }
}
