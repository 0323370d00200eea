/// Where the ledger lives. Local file first; remote backends later implement the same protocol.
package protocol StateBackend: Sendable {
    /// nil when no state has been written yet.
    func read() throws -> Ledger?
    func write(_ ledger: Ledger) throws
    /// A name for messages: a path or URL.
    var displayName: String { get }
}
