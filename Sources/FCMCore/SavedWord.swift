/// A word of a plan file that names a case of `Value` (an action, a step's operation, an ownership), written
/// as the bare raw value. Read as it is, whatever it says: a word no fcmctl writes is refused by name when
/// the plan is read back (`SavedPlan.plan()`), after the digest check, not as a file that is no plan at all.
package struct SavedWord<Value: RawRepresentable & Sendable & Hashable>: Codable, Sendable, Hashable where Value.RawValue == String {
    /// The word as the file holds it.
    package var text: String

    package init(_ value: Value) { text = value.rawValue }

    /// nil for a word no fcmctl writes.
    package var value: Value? { Value(rawValue: text) }

    package init(from decoder: any Decoder) throws { text = try decoder.singleValueContainer().decode(String.self) }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(text)
    }
}
