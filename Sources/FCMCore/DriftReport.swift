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
        package var address: String
        /// What `apply` would do about it: create, update, delete, or none.
        package var action: String
        package var registrations: [Registration]
        package var detail: String

        package init(category: Category, address: String, action: String, registrations: [Registration], detail: String) {
            self.category = category
            self.address = address
            self.action = action
            self.registrations = registrations
            self.detail = detail
        }
    }

    package var findings: [Finding] = []
    /// Facts drift could not read from FCM and took from the state instead, one line each, sorted.
    package var notReadFromFCM: [String] = []

    package init() {}

    package var hasDrift: Bool { !findings.isEmpty }

    package func findings(in category: Category) -> [Finding] { findings.filter { $0.category == category } }
}
