/// Why a computed plan may not be applied: it is still shown whole (a reviewer sees what a merge would have
/// done), and the run ends with exit 1 before anything is sent.
package enum PlanRefusal: Hashable, Sendable {
    /// `--max-removals`: more subscriptions and group members removed than the limit; the objects that
    /// remove the most first.
    case tooManyRemovals(removals: Int, limit: Int, largest: [ObjectRemovals])
    /// Registrations the plan introduces (a new device, or a device's new token or FID) that FCM does not know:
    /// applying would take away what they replace and add nothing.
    case unknownRegistrations([UnknownRegistration])
}

package struct ObjectRemovals: Hashable, Sendable {
    package var address: Address
    package var count: Int

    package init(address: Address, count: Int) {
        self.address = address
        self.count = count
    }
}

/// A declared registration that fcmctl never saw working and that FCM reported as not known.
package struct UnknownRegistration: Hashable, Sendable {
    package var registration: Registration
    package var device: String?
    /// What FCM said (NOT_FOUND, UNREGISTERED, …).
    package var reason: String
    /// The registration the device had before, when this one replaces it.
    package var replaces: Registration?
    /// Where it is declared: the device's line in its file, else the first topic declaring it.
    package var location: SourceLocation?

    package init(registration: Registration, device: String?, reason: String, replaces: Registration?, location: SourceLocation?) {
        self.registration = registration
        self.device = device
        self.reason = reason
        self.replaces = replaces
        self.location = location
    }
}
