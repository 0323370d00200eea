/// One change to the ledger that an FCM request makes true when it succeeds. The state journal records
/// each as an intent before its request is sent and as done (or gone) after, so a run killed at any moment
/// leaves either a record or an intent that the next refresh resolves (product.md invariant 6).
package enum LedgerEvent: Hashable, Sendable {
    case subscribed(topic: String, registration: Registration)
    case unsubscribed(topic: String, registration: Registration)
    /// The group's members after the step.
    case group(name: String, members: [Registration])

    package func apply(to ledger: inout Ledger) {
        switch self {
        case .subscribed(let topic, let registration): ledger.recordSubscription(registration, topic: topic)
        case .unsubscribed(let topic, let registration): ledger.forgetSubscription(registration, topic: topic)
        case .group(let name, let members): ledger.recordGroup(name, members: Set(members))
        }
    }

    /// The registration is gone, so whatever was intended, no subscription of it exists.
    package func applyGone(to ledger: inout Ledger) {
        switch self {
        case .subscribed(let topic, let registration), .unsubscribed(let topic, let registration):
            ledger.forgetSubscription(registration, topic: topic)
        case .group: break
        }
    }

    /// An intent with no completion: the change may have happened.
    package func markPending(in ledger: inout Ledger) {
        switch self {
        case .subscribed(let topic, let registration): ledger.pending.subscriptions[topic, default: []].insert(registration)
        // The record stays until FCM shows the subscription gone; refresh reads it because the ledger names it.
        case .unsubscribed: break
        case .group(let name, let members):
            ledger.pending.groups.insert(name)
            ledger.pending.groupMembers[name, default: ledger.groups[name]?.members ?? []].formUnion(members)
        }
    }
}

/// One line of the state journal, as the engine sees it. Ids number the intents of one run.
///
/// A completion line carries `after`, the last intent id written before it: a reader that has seen fewer
/// intents by then knows a line was cut, even when the cut intent was the last of its window and no later
/// intent's number shows the gap.
package enum JournalEntry: Hashable, Sendable {
    case intent(id: Int, LedgerEvent)
    case done(ids: [Int], after: Int? = nil)
    case gone(ids: [Int], after: Int? = nil)
}
