import FCMCore
import FCMManifest

/// Registrations a plan introduces (declared, and never seen by fcmctl: not in its records, not in the
/// last apply's manifests) that FCM reported as unknown. A token cut short in an export, or with one
/// character changed, looks exactly like this; a registration fcmctl once saw working and that died since
/// is drift instead, reported as it always was.
package enum IntroducedRegistrations {
    package static func unknown(
        desired: DesiredState, ledger: Ledger, observed: ObservedState, manifest: Manifest?, replaced: [Registration: Registration]
    ) -> [UnknownRegistration] {
        var declaredIn: [Registration: SourceLocation?] = [:]
        var declaredBy: [Registration: Address] = [:]
        let objects =
            desired.topics.values.map { (Address.topic($0.name), $0.members, $0.location) }
            + desired.groups.values.map { (Address.group($0.name), $0.members, $0.location) }
        for (address, members, location) in objects {
            for member in members {
                guard case .gone = observed.registrations[member] else { continue }
                if let other = declaredBy[member], other < address { continue }
                declaredBy[member] = address
                declaredIn[member] = location
            }
        }
        guard !declaredIn.isEmpty else { return [] }
        let recordedInGroups = Set(ledger.groups.values.flatMap(\.members))
        let pending = ledger.subscribedRegistrations
        var found: [UnknownRegistration] = []
        for (registration, declaration) in declaredIn {
            let known =
                ledger.deviceNames[registration] != nil || ledger.applied.declares(registration) || pending.contains(registration)
                || recordedInGroups.contains(registration)
            guard !known, case .gone(let reason)? = observed.registrations[registration] else { continue }
            let device = desired.deviceNames[registration]
            let location = device.flatMap { manifest?.devices[$0]?.location } ?? declaration
            found.append(
                UnknownRegistration(
                    registration: registration, device: device, reason: reason, replaces: replaced[registration], location: location))
        }
        return found.sorted { ($0.device ?? "", $0.registration) < ($1.device ?? "", $1.registration) }
    }
}
