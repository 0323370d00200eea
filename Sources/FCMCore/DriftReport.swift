/// Where FCM, the manifests and fcmctl's ledger disagree, sorted into what an on-call engineer acts on.
/// A pure function, like the planner: `drift` refreshes, asks this, and changes nothing.
package struct DriftReport: Sendable {
    package enum Category: String, CaseIterable, Sendable {
        case declaredMissing = "declared_missing"
        case managedRemoved = "managed_removed"
        case undeclaredSubscriptions = "undeclared_subscriptions"
        case observeDiffers = "observe_differs"
        case deadRegistrations = "dead_registrations"
        case groupsChanged = "groups_changed"
        case undeclaredRecords = "undeclared_records"
    }

    package struct Finding: Sendable, Hashable {
        package var category: Category
        package var address: Address
        /// What `apply` would do about it.
        package var action: ChangeAction
        package var registrations: [Registration]
        package var detail: String

        package init(category: Category, address: Address, action: ChangeAction, registrations: [Registration], detail: String) {
            self.category = category
            self.address = address
            self.action = action
            self.registrations = registrations
            self.detail = detail
        }
    }

    /// A group whose members drift took from the state: FCM documents no way to list them, so fcmctl
    /// compared the `recorded` members it holds.
    package struct MembersFromState: Sendable, Hashable {
        package var group: String
        package var recorded: Int

        package init(group: String, recorded: Int) {
            self.group = group
            self.recorded = recorded
        }
    }

    package var findings: [Finding] = []
    /// What drift could not read from FCM and took from the state instead, sorted by group.
    package var notReadFromFCM: [MembersFromState] = []

    package init() {}

    package var hasDrift: Bool { !findings.isEmpty }

    package func findings(in category: Category) -> [Finding] { findings.filter { $0.category == category } }
}
