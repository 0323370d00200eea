import FCMCore

/// FCM's refusal as fcmctl reports it: the status, FCM's code and FCM's words.
extension FCMServiceError: CustomStringConvertible {
    package var description: String { "FCM answered \(status) \(code): \(message)" }
}
