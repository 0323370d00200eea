import FCMCore

/// What `state rm` forgot.
package struct StateRemoval: Sendable {
    /// Records forgotten: one per group or subscription (a topic counts each of its subscriptions).
    package var removed: Int
    package var stateName: String
    /// The serial written.
    package var serial: Int
}

extension Session {
    /// `state rm`: forgets the records of `addresses`, so fcmctl stops managing them; FCM is neither asked nor
    /// changed. Under the state lock, in one write; an address with nothing recorded (or pending) refuses the
    /// whole removal, and nothing is written.
    package func removeFromState(_ addresses: [Address], lock: Bool, lockTimeout: Duration) async throws -> StateRemoval {
        let store = openStore()
        let redactor = Redactor(showTokens: settings.showTokens)
        return try await withStateLock(store, operation: "state rm", lock: lock, timeout: lockTimeout) { _ in
            let snapshot = try await readState(store)
            try checkProject(snapshot, store: store)
            var ledger = snapshot.ledger
            var removed = 0
            for address in addresses {
                let count = Self.forget(address, in: &ledger)
                guard count > 0 else {
                    let shown =
                        if case .subscription(let topic, let value) = address {
                            "\(Address.topic(topic))/\(redactor(Registration(inferring: value)))"
                        } else {
                            "\(address)"
                        }
                    throw EngineFailure("\(shown) is not in the state; nothing was removed")
                }
                removed += count
            }
            do {
                _ = try await commit(&ledger, to: store, replacing: snapshot.version)
            } catch {
                throw EngineFailure("\(error)")
            }
            return StateRemoval(removed: removed, stateName: store.displayName, serial: ledger.serial)
        }
    }

    /// Forgets what `ledger` records (or holds pending) at `address`; returns how many records that was.
    static func forget(_ address: Address, in ledger: inout Ledger) -> Int {
        switch address {
        case .group(let name):
            let recorded = ledger.groups.removeValue(forKey: name) != nil
            let pending = ledger.pending.groups.contains(name)
            ledger.pending.forgetGroup(name)
            return recorded || pending ? 1 : 0
        case .topic(let name):
            return (ledger.topics.removeValue(forKey: name)?.count ?? 0) + (ledger.pending.subscriptions.removeValue(forKey: name)?.count ?? 0)
        case .subscription(let topic, let value):
            let matches = (ledger.topics[topic] ?? []).union(ledger.pending.subscriptions[topic] ?? []).filter { $0.value == value }
            for match in matches { ledger.forgetSubscription(match, topic: topic) }
            return matches.isEmpty ? 0 : 1
        }
    }
}
