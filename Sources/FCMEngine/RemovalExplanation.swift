import FCMCore
import FCMManifest

/// Gives every removal of a plan its cause, from the manifests as written (selectors, labels, excludes), the
/// device names they give now, and the state's records (the names registrations had, and which
/// subscriptions fcmctl made). Only removals are looked at, so it costs what the removals cost.
package struct RemovalExplanation {
    package let manifest: Manifest
    package let desired: DesiredState
    /// registration → device name, as the manifests give them now (not the state's older names).
    package let currentNames: [Registration: String]
    package let ledger: Ledger

    package init(manifest: Manifest, desired: DesiredState, currentNames: [Registration: String], ledger: Ledger) {
        self.manifest = manifest
        self.desired = desired
        self.currentNames = currentNames
        self.ledger = ledger
    }

    package func causes(of plan: Plan) -> RemovalCauses {
        var causes = RemovalCauses()
        for change in plan.groups where !change.removed.isEmpty {
            var byRegistration: [Registration: RemovalCause] = [:]
            for registration in change.removed { byRegistration[registration] = groupCause(change.name, registration) }
            causes.groups[change.name] = byRegistration
        }
        for change in plan.topics where !change.removed.isEmpty {
            let declared = desired.topics[change.name] == nil ? nil : manifest.topic(planned: change.name)
            let recorded = ledger.topics[change.name] ?? []
            var byRegistration: [Registration: RemovalCause] = [:]
            for registration in change.removed {
                byRegistration[registration] = topicCause(
                    declared, ownership: change.ownership, registration, recorded: recorded.contains(registration))
            }
            causes.topics[change.name] = byRegistration
        }
        return causes
    }

    func groupCause(_ name: String, _ registration: Registration) -> RemovalCause {
        guard let group = desired.groups[name] else { return desired.localGroups[name] != nil ? .groupMadeLocal : .objectUndeclared }
        if group.members.isEmpty { return .groupEmptied }
        return deviceCause(registration) ?? .memberDropped(device: currentNames[registration])
    }

    func topicCause(_ topic: ManifestTopic?, ownership: Ownership, _ registration: Registration, recorded: Bool) -> RemovalCause {
        guard let topic else { return .objectUndeclared }
        // Under authoritative ownership a subscription fcmctl did not make is removed for not being declared,
        // whatever else is true of its device.
        if ownership == .authoritative && !recorded {
            // What the device's declaration says is still the better reason, when it says anything.
            guard let device = currentNames[registration] else { return .undeclaredSubscriber(device: nil) }
            let why = manifest.whyNotMember(device: device, of: topic)
            if case .memberDropped = why { return .undeclaredSubscriber(device: device) }
            return why
        }
        if let cause = deviceCause(registration) { return cause }
        if let device = currentNames[registration] { return manifest.whyNotMember(device: device, of: topic) }
        return manifest.excludes(registration, from: topic) ? .excluded(device: nil) : .memberDropped(device: nil)
    }

    /// The registration's device left the manifests, now has another registration, or the registration is now
    /// another device's; nil when the device fcmctl recorded still holds it, or no device ever did.
    func deviceCause(_ registration: Registration) -> RemovalCause? {
        guard let old = ledger.deviceNames[registration] else { return nil }
        if let now = currentNames[registration] { return now == old ? nil : .reassigned(from: old, to: now) }
        return !manifest.devices.contains(old) ? .deviceUndeclared(device: old) : .rotated(device: old)
    }
}
