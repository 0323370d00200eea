/// How a use case ends when it cannot go on: what to tell the person (nil when it was told already) and the
/// exit code of the documented contract. Commands print the message once, as `error: …`, and exit.
package struct EngineFailure: Error, CustomStringConvertible {
    package var message: String?
    package var code: Int32

    package init(_ message: String?, code: Int32 = ExitCodes.error) {
        self.message = message
        self.code = code
    }

    /// An exit with nothing more to say: the lines before it said why.
    package static func exit(_ code: Int32) -> EngineFailure { EngineFailure(nil, code: code) }

    package var description: String { message ?? "exit \(code)" }
}
