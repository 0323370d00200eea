/// Which refresh ran (`--refresh=all|changed`) and how much it read.
struct RefreshSummary: Sendable {
    var mode: String
    var registrationsRead: Int
    var registrationsKnown: Int
    var groupsRead: Int
    var groupsKnown: Int

    /// Whether every topic's unchanged subscribers were read. `changed` reads only the registrations whose
    /// declaration changed, so a topic's "0 unchanged" would mean "not read", and is shown as such.
    var unchangedRead: Bool { mode == RefreshMode.all.rawValue }

    var json: JSONTree {
        .object([
            ("mode", .string(mode)), ("registrations_read", .int(registrationsRead)), ("registrations_known", .int(registrationsKnown)),
            ("groups_read", .int(groupsRead)), ("groups_known", .int(groupsKnown)),
        ])
    }

    var line: String {
        mode == "all"
            ? "Refresh: all (\(plural(registrationsRead, "registration")) and \(plural(groupsRead, "group")) read)."
            : "Refresh: changed only (\(registrationsRead) of \(plural(registrationsKnown, "registration")), \(groupsRead) of \(plural(groupsKnown, "group")) read); "
                + "drift elsewhere is not checked and topics' unchanged subscribers are not read: `fcmctl drift` and apply read everything."
    }
}
