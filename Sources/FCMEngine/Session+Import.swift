import FCMCore

extension Session {
    /// Before FCM is asked anything: a turned-down API is refused, and so is a state of another project
    /// (quietly: what the read has to say is said when `recordImport` reads it again under the lock).
    package func checkImport(usesIID: Bool) async throws {
        if let reason = PlatformDeprecations.refusal(usesGroups: false, usesIID: usesIID, now: world.now()) {
            throw EngineFailure(reason)
        }
        let early: StateSnapshot
        do {
            early = try await openStore().read()
        } catch {
            throw EngineFailure("\(error)")
        }
        try checkProject(early, store: openStore(), warn: false)
    }

    /// The import use case's write: under the lock, `record` changes the state as read, `claim` writes the
    /// import file (the file claims the records), and when the state cannot record them `release` removes
    /// it again, so a failed import leaves neither a file that lies nor one that blocks the retry.
    package func recordImport(
        lock: Bool, timeout: Duration, claim: () throws -> Void, release: () -> Void, _ record: (inout Ledger) -> Void
    ) async throws -> (state: String, serial: Int) {
        let store = openStore()
        return try await withStateLock(store, operation: "import", lock: lock, timeout: timeout) { _ in
            let snapshot = try await readState(store)
            // Checked again under the lock: the state may have been replaced since `checkImport`.
            try checkProject(snapshot, store: store)
            var ledger = snapshot.ledger
            record(&ledger)
            if let project { ledger.bind(to: project) }
            try claim()
            do {
                ledger.serial = try ledger.nextSerial()
                _ = try await store.write(ledger, replacing: snapshot.version)
            } catch {
                release()
                throw EngineFailure("\(error)")
            }
            return (store.displayName, ledger.serial)
        }
    }
}
