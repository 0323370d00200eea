/// What applying a plan does to one object: the action of a plan's group change, of a saved plan's group, of
/// a drift finding, and the word every view prints for it. The raw values are what plan files and JSON
/// documents hold.
package enum ChangeAction: String, Codable, CaseIterable, Sendable, CustomStringConvertible {
    case create
    case update
    case delete
    /// Nothing fcmctl will do (an observe-only topic, a dead registration): reported only.
    case none

    package var description: String { rawValue }
}
