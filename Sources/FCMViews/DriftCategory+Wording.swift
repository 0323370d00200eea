import FCMCore

/// What each kind of drift is called, and what to do about it.
extension DriftReport.Category {
    package var title: String {
        switch self {
        case .declaredMissing: "Declared subscriptions missing"
        case .managedRemoved: "Subscriptions fcmctl created, removed out of band"
        case .undeclaredSubscriptions: "Undeclared subscriptions on authoritative topics"
        case .observeDiffers: "Observe-only topics that differ"
        case .deadRegistrations: "Dead registrations"
        case .groupsChanged: "Groups deleted or changed out of band"
        case .undeclaredRecords: "Records of objects no longer declared"
        }
    }

    package var suggestion: String {
        switch self {
        case .declaredMissing: "run `fcmctl apply` to subscribe them"
        case .managedRemoved: "something outside fcmctl unsubscribed them: `fcmctl apply` subscribes them again, or remove them from the manifest"
        case .undeclaredSubscriptions: "`fcmctl apply` removes them (the topic is authoritative); declare them to keep them"
        case .observeDiffers: "fcmctl never changes observe-only topics: update the manifest to match, or change the topic's ownership"
        case .deadRegistrations: "the apps were uninstalled or their registrations expired: remove them from the manifest"
        case .groupsChanged: "`fcmctl apply` restores the declared members (and recreates a deleted group)"
        case .undeclaredRecords: "`fcmctl apply` removes what fcmctl created for them; declare them again to keep them"
        }
    }
}
