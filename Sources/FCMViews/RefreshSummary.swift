import FCMCore

/// Which refresh ran (`--refresh=all|changed`) and how much it read.
package struct RefreshSummary: Sendable {
    package var mode: String
    package var registrationsRead: Int
    package var registrationsKnown: Int
    package var groupsRead: Int
    package var groupsKnown: Int

    package init(mode: String, registrationsRead: Int, registrationsKnown: Int, groupsRead: Int, groupsKnown: Int) {
        self.mode = mode
        self.registrationsRead = registrationsRead
        self.registrationsKnown = registrationsKnown
        self.groupsRead = groupsRead
        self.groupsKnown = groupsKnown
    }

    /// Whether every topic's unchanged subscribers were read. `changed` reads only the registrations whose
    /// declaration changed, so a topic's "0 unchanged" would mean "not read", and is shown as such.
    package var unchangedRead: Bool { mode == RefreshMode.all.rawValue }

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
