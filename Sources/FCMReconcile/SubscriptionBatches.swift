import FCMCore

/// Registrations of one topic and one action, sent in one request where the API allows (a slice of the
/// topic's list, not a copy).
package struct SubscriptionBatch: Sendable, Hashable {
    package var topic: String
    package var action: SubscriptionChange.Action
    package var registrations: ArraySlice<Registration>

    package var address: Address { .topic(topic) }

    func event(_ registration: Registration) -> LedgerEvent {
        action == .subscribe
            ? .subscribed(topic: topic, registration: registration) : .unsubscribed(topic: topic, registration: registration)
    }
}

/// The batches of one apply phase, made on demand from each topic's list. The v1 API takes one registration
/// per request, so there are as many batches as changes: stored one by one, each would be an array of its
/// own; made on demand they cost nothing beyond the lists the plan already holds.
package struct SubscriptionBatches: RandomAccessCollection, Sendable {
    package struct List: Sendable {
        package var topic: String
        package var action: SubscriptionChange.Action
        package var registrations: [Registration]

        package init(topic: String, action: SubscriptionChange.Action, registrations: [Registration]) {
            self.topic = topic
            self.action = action
            self.registrations = registrations
        }
    }

    struct Segment: Sendable {
        var list: List
        var firstBatch: Int
        var firstOperation: Int
    }

    private let segments: [Segment]
    /// Registrations per batch.
    package let size: Int
    package let startIndex = 0
    package let endIndex: Int

    package init(_ lists: [List], size: Int) {
        let size = Swift.max(1, size)
        var segments: [Segment] = []
        var batches = 0
        var operations = 0
        for list in lists where !list.registrations.isEmpty {
            segments.append(Segment(list: list, firstBatch: batches, firstOperation: operations))
            batches += (list.registrations.count + size - 1) / size
            operations += list.registrations.count
        }
        self.segments = segments
        self.size = size
        endIndex = batches
    }

    package subscript(position: Int) -> SubscriptionBatch {
        let segment = segments[segmentIndex(of: position)]
        let start = (position - segment.firstBatch) * size
        let registrations = segment.list.registrations
        return SubscriptionBatch(
            topic: segment.list.topic, action: segment.list.action,
            registrations: registrations[start..<Swift.min(start + size, registrations.count)])
    }

    /// How many registrations come before batch `position`.
    package func firstOperation(of position: Int) -> Int {
        let segment = segments[segmentIndex(of: position)]
        return segment.firstOperation + (position - segment.firstBatch) * size
    }

    /// The registrations of batches `position...`, one part per topic.
    package func remaining(from position: Int) -> [SubscriptionBatch] {
        guard position < endIndex else { return [] }
        let first = segmentIndex(of: position)
        return segments[first...].map { segment in
            let start = segment.firstBatch < position ? (position - segment.firstBatch) * size : 0
            return SubscriptionBatch(
                topic: segment.list.topic, action: segment.list.action,
                registrations: segment.list.registrations[start...])
        }
    }

    /// The last segment starting at or before `position` (binary search: segments are few, batches many).
    private func segmentIndex(of position: Int) -> Int {
        var low = 0
        var high = segments.count - 1
        while low < high {
            let middle = (low + high + 1) / 2
            if segments[middle].firstBatch <= position { low = middle } else { high = middle - 1 }
        }
        return low
    }
}
