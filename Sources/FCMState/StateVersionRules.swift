import FCMCore

/// What keeps a state's format version from being lowered. Each version checks more than the one before (a
/// version-2 state has no checksum), so a version that could be edited down would switch those checks off:
/// `"version": 4` edited to 2 once let a deleted topic's records through, and 300 subscriptions became
/// orphans. Two things a lowered version cannot hide: the fields only newer versions write, and the serial
/// record, which names the format of the last state the store wrote (fcmctl only ever writes its current
/// format, so a state older than that was put there by hand).
package enum StateVersionRules {
    /// The first format version that wrote each field (from the history of StateFileFormat: v2 brought the
    /// registration lists, the journal's merged runs, pending and applied; v3 the checksum and pending group
    /// members; v4 the project and device names).
    static let introduced: [(field: String, version: Int)] = [
        ("tokens", 2), ("fids", 2), ("merged_runs", 2), ("pending", 2), ("applied", 2), ("checksum", 3), ("project", 4),
        ("device_names", 4),
    ]

    /// The field written only by the newest version among those the state carries, if any is newer than 1.
    static func newestField(of document: JSONValue) -> (field: String, version: Int)? {
        var newest: (field: String, version: Int)?
        for (field, version) in introduced where document[field] != nil && version > (newest?.version ?? 1) {
            newest = (field, version)
        }
        if document["pending"]?["group_members"] != nil && 3 > (newest?.version ?? 1) { newest = ("pending.group_members", 3) }
        return newest
    }

    /// The way out every refusal of a version names: a person who has looked at the file says it is right.
    static let wayOut =
        "Restore the state from a backup (a GCS bucket with versioning keeps older generations), or check the file and put back "
        + "the state you mean deliberately with `fcmctl state push --force FILE` (a pushed file is checked by its fields and "
        + "written in the current format)"

    static func refusal(_ source: String, _ problem: String) -> StateError {
        StateError("\(source): the state is not valid fcmctl state: \(problem). \(wayOut)")
    }

    static func lowered(_ source: String, named: Int, field: String, since: Int) -> StateError {
        StateError(
            "\(source): the state says format version \(named), but its field '\(field)' is written only by version \(since) and "
                + "later: its version was lowered by an edit or damage, and reading it as version \(named) would skip checks its "
                + "content must pass (\(skipped(named))). \(wayOut)")
    }

    /// A state in an older format than the serial record says the store last wrote.
    static func olderThanRecorded(_ statePath: String, named: Int, recorded: RecordedSerial, recordPath: String) -> StateConflictError {
        StateConflictError(
            "\(statePath) says format version \(named), but this store last wrote format version \(recorded.format ?? 0) (serial "
                + "\(recorded.serial) of lineage \(recorded.lineage), as its serial record \(recordPath) says). fcmctl writes only its "
                + "current format, so this state's version was lowered by an edit, or an older copy was put back, and reading it as "
                + "version \(named) would skip checks its content must pass (\(skipped(named))). \(wayOut)")
    }

    /// What reading a state as version `named` would not check.
    static func skipped(_ named: Int) -> String {
        named < 3
            ? "a state below version 3 has no checksum"
            : "a state below version 4 names no project, so another project's state would be read as this one's"
    }
}

/// What a store's serial record says about the last state it wrote.
package struct RecordedSerial: Sendable, Equatable {
    package var lineage: String
    package var serial: Int
    /// The format version of that state; nil in a record an older fcmctl wrote.
    package var format: Int?
}
