import FCMCore

/// How a registration is named in output: the device name when the manifest gives one, always redacted
/// unless `--show-tokens`.
struct RegistrationLabeler: Sendable {
    let redactor: Redactor
    var deviceNames: [Registration: String] = [:]

    func label(_ registration: Registration) -> String {
        deviceNames[registration].map { "\($0) (\(redactor(registration)))" } ?? redactor(registration)
    }

    /// The device name alone, for documents that carry the registration beside it.
    func name(_ registration: Registration) -> String? { deviceNames[registration] }
}
