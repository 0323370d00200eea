import FCMCore

/// Records completed operations in the ledger and writes it through the backend as work completes, so an
/// interrupted apply keeps what it did. Every write bumps the serial.
package actor LedgerJournal {
    package private(set) var ledger: Ledger
    private let backend: any StateBackend
    private let flushEvery: Int
    private var unsaved = 0
    private var lastSaved: Ledger?

    /// `saved` is what the backend holds now (nil if nothing): writes happen only when the ledger differs.
    package init(ledger: Ledger, backend: any StateBackend, saved: Ledger?, flushEvery: Int = 1_000_000) {
        self.ledger = ledger
        self.backend = backend
        self.flushEvery = max(1, flushEvery)
        self.lastSaved = saved
    }

    package func record(_ change: @Sendable (inout Ledger) -> Void, flushNow: Bool = false) throws {
        change(&ledger)
        unsaved += 1
        if flushNow || unsaved >= flushEvery { try flush() }
    }

    /// Records a completed operation: applied to the ledger and appended to the backend's journal at once.
    package func record(_ event: LedgerEvent) throws {
        event.apply(to: &ledger)
        try backend.append([event])
    }

    /// Writes only when the content changed, so a no-op apply leaves the file (and its serial) alone.
    package func flush() throws {
        unsaved = 0
        if let lastSaved {
            var candidate = ledger
            candidate.serial = lastSaved.serial
            if candidate == lastSaved { return }
        }
        ledger.serial = (lastSaved?.serial ?? 0) + 1
        try backend.write(ledger)
        lastSaved = ledger
    }
}
