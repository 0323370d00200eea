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
}
