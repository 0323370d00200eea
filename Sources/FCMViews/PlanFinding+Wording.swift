import FCMCore

extension PlanFinding {
    /// The finding as people read it, where the manifest declares the object it is about. Registrations are
    /// redacted here whatever `--show-tokens` says: notes travel into saved plans and annotations.
    package var diagnostic: Diagnostic {
        let redactor = Redactor(showTokens: false)
        switch self {
        case .protectedGroupKept(let group):
            return .warning(
                "\(Address.group(group)) is no longer in the manifest but was protected when last applied; fcmctl keeps it. "
                    + "To delete it, declare it once more without 'protect', apply, then remove it")
        case .groupAdoptedUnread(let group, let location):
            return .warning(
                "\(Address.group(group)) is adopted without reading its members: FCM documents no way to list them. fcmctl adds "
                    + "the declared members; members it was not told about stay in the group", at: location)
        case .groupNotInState(let group, let location):
            return .warning(
                "\(Address.group(group)) exists in FCM but not in the state: import it (fcmctl import group \(group)) or let apply adopt it "
                    + "(--adopt-existing); until then fcmctl leaves it as it is", at: location)
        case .observeOnlyDiffers(let topic, let missing, let extra, let location):
            return .warning(
                "\(Address.topic(topic)) is observe-only and differs from the manifest: \(missing) declared "
                    + "subscription(s) missing, \(extra) to remove; fcmctl will not change it",
                at: location)
        case .registrationGone(let topic, let registration, let device, let reason, let location):
            // The device name says which screen to look at; the registration stays redacted beside it.
            let redacted = redactor(registration)
            let who = device.map { "\($0) (\(redacted))" } ?? redacted
            return .warning(
                "\(Address.topic(topic)): registration \(who) is no "
                    + "longer registered with FCM (\(reason)); it was skipped: remove it from the manifest",
                at: location)
        case .rotated(let device, let old, let new):
            return Diagnostic(
                .note,
                "device \(device) rotated its registration (\(redactor(old)) → \(redactor(new))): "
                    + "its subscriptions and group memberships move to the new one")
        }
    }
}

extension Plan {
    /// What the plan found but will not act on, in words: for text, documents and annotations.
    package var notes: [Diagnostic] { findings.map(\.diagnostic) }
}
