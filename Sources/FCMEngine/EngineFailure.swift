import FCMCore

/// How a use case ends when it cannot go on: what to tell the person (nothing when it was told already),
/// each problem an error notice, the cause it ends on last, and the exit code of the documented contract.
/// Commands say the notices once and exit.
package struct EngineFailure: Error, CustomStringConvertible {
    package var notices: [Notice]
    package var code: Int32

    package init(_ message: String?, about address: Address? = nil, code: Int32 = ExitCodes.error) {
        self.init(notices: message.map { [.error($0, about: address)] } ?? [], code: code)
    }

    package init(notices: [Notice], code: Int32 = ExitCodes.error) {
        self.notices = notices
        self.code = code
    }

    /// An exit with nothing more to say: the lines before it said why.
    package static func exit(_ code: Int32) -> EngineFailure { EngineFailure(notices: [], code: code) }

    package var description: String { notices.isEmpty ? "exit \(code)" : notices.map(\.message).joined(separator: "\n") }
}
