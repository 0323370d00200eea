import FCMCore

extension RemovalCause {
    /// The stable name documents carry (`cause` in the JSON plan and apply documents).
    package var kind: String {
        switch self {
        case .objectUndeclared: "object_removed"
        case .groupEmptied: "group_emptied"
        case .groupMadeLocal: "group_made_local"
        case .deviceUndeclared: "device_removed"
        case .rotated: "rotated"
        case .reassigned: "registration_moved"
        case .labelMismatch: "labels_changed"
        case .excluded: "excluded"
        case .memberDropped: "member_dropped"
        case .undeclaredSubscriber: "not_declared"
        }
    }

    /// Why, beside a removed registration (whose device the label already names). `type` is `group` or
    /// `topic`, the kind of object it leaves.
    package func reason(in type: String) -> String {
        switch self {
        case .objectUndeclared: "the \(type) is no longer declared in the manifests"
        case .groupEmptied: "the group is declared with no members"
        case .groupMadeLocal: "the group is now declared mode: local (kept by fcmctl, not FCM)"
        case .deviceUndeclared: "the device is no longer declared (it left its device file or manifest)"
        case .rotated: "the device's registration changed (rotation): its new one replaces this one"
        case .reassigned(let from, let to): "the registration was \(from)'s and is now \(to)'s, which is not a member"
        case .labelMismatch(_, let label, let wanted, let value):
            value.map { "label \(label) is '\($0)', the selector wants \(Self.wanted(wanted))" }
                ?? "no label \(label), the selector wants \(label)=\(Self.wanted(wanted))"
        case .excluded: "listed under exclude"
        case .memberDropped: "no longer listed among the members"
        case .undeclaredSubscriber: "not declared, and subscribed outside fcmctl (authoritative topic)"
        }
    }

    /// What removals of one kind have in common, for a count in the banner: the device left out, so every
    /// device whose label went the same way is counted together.
    package func summary(in type: String) -> String {
        switch self {
        case .labelMismatch(_, let label, let wanted, let value):
            value == nil
                ? "the device has no label \(label) (the selector wants \(label)=\(Self.wanted(wanted)))"
                : "the device's label \(label) is not what the selector wants (\(Self.wanted(wanted)))"
        case .deviceUndeclared: "the device is no longer declared (it left its device file or manifest)"
        case .rotated: "the device's registration changed (rotation)"
        case .reassigned: "the registration is now another device's (rows shifted in an export?)"
        case .excluded: "the device is listed under exclude"
        case .memberDropped: "the member is no longer listed"
        case .undeclaredSubscriber: "subscribed outside fcmctl and not declared (authoritative)"
        default: reason(in: type)
        }
    }

    /// The selector's values, at most three of them: a line in a banner stays a line.
    static func wanted(_ values: [String]) -> String {
        if values.count == 1 { return "'\(values[0])'" }
        let shown = values.prefix(3).map { "'\($0)'" }.joined(separator: ", ")
        return "one of " + shown + (values.count > 3 ? " and \(values.count - 3) more" : "")
    }
}
