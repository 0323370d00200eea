/// The Firebase project a state belongs to: its id (what the v1 APIs address) and its sender id (the project
/// number the device-group API names). A state records fcmctl's subscriptions and groups in one project; read
/// against another project's manifest, its records look like subscriptions that project no longer declares,
/// and an apply removes them (issue 23: a prod apply deleted dev's subscriptions through a shared state).
/// An empty field is unknown (a manifest without `project.id`, a state written before the binding existed):
/// only two known values that differ are a conflict.
package struct ProjectBinding: Hashable, Sendable {
    package var id: String
    package var senderId: String

    package init(id: String = "", senderId: String = "") {
        self.id = id
        self.senderId = senderId
    }

    package var isEmpty: Bool { id.isEmpty && senderId.isEmpty }

    /// Whether `other` is known to be another project.
    package func conflicts(with other: ProjectBinding) -> Bool {
        (!id.isEmpty && !other.id.isEmpty && id != other.id)
            || (!senderId.isEmpty && !other.senderId.isEmpty && senderId != other.senderId)
    }

    /// This binding completed by `newer` where `newer` knows more: a write records what the run knows and
    /// never forgets what the state already knew.
    package func completed(by newer: ProjectBinding) -> ProjectBinding {
        ProjectBinding(id: newer.id.isEmpty ? id : newer.id, senderId: newer.senderId.isEmpty ? senderId : newer.senderId)
    }
}
