import FCMCore

extension RefreshSummary {
    package var json: JSONTree {
        .object([
            ("mode", .string(mode)), ("registrations_read", .int(registrationsRead)), ("registrations_known", .int(registrationsKnown)),
            ("groups_read", .int(groupsRead)), ("groups_known", .int(groupsKnown)),
        ])
    }

    package var line: String {
        mode == "all"
            ? "Refresh: all (\(plural(registrationsRead, "registration")) and \(plural(groupsRead, "group")) read)."
            : "Refresh: changed only (\(registrationsRead) of \(plural(registrationsKnown, "registration")), \(groupsRead) of \(plural(groupsKnown, "group")) read); "
                + "drift elsewhere is not checked and topics' unchanged subscribers are not read: `fcmctl drift` and apply read everything."
    }
}
