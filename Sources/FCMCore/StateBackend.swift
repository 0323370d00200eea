/// Where the ledger lives. Local file first; remote backends later implement the same protocol.
package protocol StateBackend: Sendable {
    /// nil when no state has been written yet.
    func read() throws -> Ledger?
    /// Replaces the state and clears the journal.
    func write(_ ledger: Ledger) throws
    /// Appends completed operations to the journal; cheap enough to call for every one.
    func append(_ events: [LedgerEvent]) throws
    /// A name for messages: a path or URL.
    var displayName: String { get }
}
