/// Why a plan removes a subscription or a group member, or deletes a group: what a reviewer needs to tell a
/// mistake (a renamed column, a truncated export) from an intended clean-up. Values; the views word them.
package enum RemovalCause: Hashable, Sendable {
    /// The topic or group is no longer declared in any manifest read.
    case objectUndeclared
    /// The group is declared with no members.
    case groupEmptied
    /// The group is now declared `mode: local`: the FCM group goes, the members stay in the manifest.
    case groupMadeLocal
    /// The device that held the registration is no longer declared (it left its device file or the manifest).
    case deviceUndeclared(device: String)
    /// The device is declared with another registration now: the old one is replaced.
    case rotated(device: String)
    /// The registration is now another device's (an export whose rows shifted, a token pasted on the wrong
    /// line): it was `from`'s when fcmctl recorded it.
    case reassigned(from: String, to: String)
    /// The device no longer matches the topic's selector: its `label` is now `value` (nil: it has none),
    /// where the selector wants one of `wanted`.
    case labelMismatch(device: String, label: String, wanted: [String], value: String?)
    /// The device or registration is listed under the topic's `exclude`.
    case excluded(device: String?)
    /// The member is no longer listed.
    case memberDropped(device: String?)
    /// An authoritative topic: a registration fcmctl knows is subscribed without being declared a member,
    /// and fcmctl did not make that subscription.
    case undeclaredSubscriber(device: String?)

    package var device: String? {
        switch self {
        case .objectUndeclared, .groupEmptied, .groupMadeLocal: nil
        case .deviceUndeclared(let device), .rotated(let device), .labelMismatch(let device, _, _, _), .reassigned(_, let device): device
        case .excluded(let device), .memberDropped(let device), .undeclaredSubscriber(let device): device
        }
    }
}

/// The cause of each removal of a plan, by object: filled in after planning from the manifests as written
/// and the state, so the planner stays a function of registrations alone.
package struct RemovalCauses: Hashable, Sendable {
    package var topics: [String: [Registration: RemovalCause]] = [:]
    package var groups: [String: [Registration: RemovalCause]] = [:]

    package init() {}

    package var isEmpty: Bool { topics.isEmpty && groups.isEmpty }

    package func topic(_ name: String, _ registration: Registration) -> RemovalCause? { topics[name]?[registration] }
    package func group(_ name: String, _ registration: Registration) -> RemovalCause? { groups[name]?[registration] }
}
