import Synchronization

/// Gives equal values one shared storage. What FCM reports repeats itself at fleet scale: a million
/// topic names in list responses, and the same few sets of topics on a hundred thousand registrations.
/// Interned, each distinct name or set is stored once however often it is read.
package final class InternTable<Value: Hashable & Sendable>: Sendable {
    private let values = Mutex(Set<Value>())

    package init() {}

    package func intern(_ value: Value) -> Value {
        values.withLock { values in
            if let existing = values.firstIndex(of: value) { return values[existing] }
            values.insert(value)
            return value
        }
    }
}
