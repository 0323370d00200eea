import FCMCore

package enum ConsoleText {
    /// Server text (an error message from FCM, GCS or a token service) on one line, made safe to print.
    package static func oneLine(_ text: String) -> String { PrintableText.oneLine(text) }
}
