import FCMCore

/// Stored state plus journal → the snapshot a run works from. Shared by every store, so replay rules
/// (torn last line tolerated, any other damaged line an error, runs already merged skipped) are one.
package enum StateAssembly {
    package static func snapshot(
        stored: StateFileFormat.Decoded?, journal: [UInt8]?, statePath: String, journalPath: String
    ) throws -> StateSnapshot {
        var warnings: [String] = []
        var ledger = stored?.ledger ?? Ledger()
        if stored == nil, let journal, let header = firstRunHeader(journal) {
            // Killed during its first apply: the journal alone says what was done, under its lineage.
            ledger = Ledger(lineage: header.lineage, serial: 0)
        }
        var replayed = 0
        var pending = 0
        if let journal, !journal.isEmpty {
            var replayer = JournalReplayer(ledger: ledger, skippingRuns: stored?.mergedRuns ?? [])
            let (lines, torn) = Self.lines(journal)
            for (number, line) in lines {
                let decoded: JournalFormat.Line
                do {
                    decoded = try JournalFormat.decodeLine(line)
                } catch {
                    throw StateError(
                        "\(journalPath):\(number): not a valid journal record (\(error)). Only a torn last line is expected "
                            + "after a crash, and this one is followed by others, so the journal was damaged. Repair or delete "
                            + "that line (FCM will be re-read for its operation) and run again")
                }
                try replayer.apply(decoded, source: "\(journalPath):\(number)")
            }
            if let torn {
                warnings.append("\(journalPath):\(torn): ignored a torn last line (the run writing it was killed); FCM will be re-read for it")
            }
            (ledger, pending) = replayer.finish()
            replayed = replayer.entries
        }
        let version = stored.map { StateVersion(lineage: $0.ledger.lineage, serial: $0.ledger.serial) }
        let oldFormat = stored.map { $0.formatVersion < StateFileFormat.currentVersion } ?? false
        if let stored, oldFormat {
            warnings.append(
                "\(statePath): state format version \(stored.formatVersion) will be upgraded to \(StateFileFormat.currentVersion) on the next write")
        }
        return StateSnapshot(
            ledger: ledger, version: version, replayedEntries: replayed, pendingIntents: pending, warnings: warnings,
            needsWrite: (journal.map { !$0.isEmpty } ?? false) || oldFormat)
    }

    /// Complete lines with their 1-based numbers, and the number of an unterminated last line if any.
    package static func lines(_ bytes: [UInt8]) -> ([(Int, ArraySlice<UInt8>)], torn: Int?) {
        var result: [(Int, ArraySlice<UInt8>)] = []
        var start = 0
        var number = 0
        for index in bytes.indices where bytes[index] == UInt8(ascii: "\n") {
            number += 1
            if index > start { result.append((number, bytes[start..<index])) }
            start = index + 1
        }
        return (result, start < bytes.count ? number + 1 : nil)
    }

    static func firstRunHeader(_ journal: [UInt8]) -> JournalFormat.RunHeader? {
        guard let end = journal.firstIndex(of: UInt8(ascii: "\n")),
            case .run(let header)? = try? JournalFormat.decodeLine(journal[..<end])
        else { return nil }
        return header
    }

    /// The runs a journal holds: a write that folds it in records them in the state.
    package static func runs(in journal: [UInt8]) -> Set<String> {
        var runs = Set<String>()
        var start = 0
        for index in journal.indices where journal[index] == UInt8(ascii: "\n") {
            addRun(journal[start..<index], to: &runs)
            start = index + 1
        }
        addRun(journal[start...], to: &runs)
        return runs
    }

    static func addRun(_ line: ArraySlice<UInt8>, to runs: inout Set<String>) {
        guard line.starts(with: runHeaderPrefix), case .run(let header)? = try? JournalFormat.decodeLine(line) else { return }
        runs.insert(header.run)
    }

    static let runHeaderPrefix = Array("{\"run\":".utf8)

    /// A state that went missing while traces of it remain: its serial record (`.serial`, `state.serial`)
    /// or journal records. fcmctl writes the state before it opens a journal, so neither exists without
    /// one; rebuilding from the journal alone would forget every record the state held.
    package static func refuseMissingState(_ statePath: String, marker: Bool, journal: Bool) throws {
        guard marker || journal else { return }
        let traces = [marker ? "its serial record" : nil, journal ? "journal records" : nil].compactMap { $0 }.joined(separator: " and ")
        throw StateConflictError(
            "\(statePath) is missing, yet the store still has \(traces): the state was deleted or lost, and starting afresh would forget every "
                + "record it held. Restore it (a GCS bucket with versioning keeps older generations), or put a state back "
                + "deliberately with `fcmctl state push --force FILE`")
    }

    /// The last serial a store recorded writing, from its serial record.
    package static func recordedSerial(_ bytes: [UInt8]?) -> RecordedSerial? {
        guard let bytes, let record = try? JSONParser.parse(bytes), let lineage = record["lineage"]?.string, let serial = record["serial"]?.int
        else { return nil }
        return RecordedSerial(lineage: lineage, serial: serial, format: record["format"]?.int)
    }

    /// The serial record a store writes beside the state after each write (read by `recordedSerial`). It names
    /// the format written too, so a state whose version was lowered afterwards is told from a genuine old one
    /// (StateVersionRules); fcmctl versions that wrote no `format` read the record as before.
    package static func serialRecord(_ ledger: Ledger) -> [UInt8] {
        var record = JSONWriter()
        record.raw("{\"lineage\":")
        record.string(ledger.lineage)
        record.raw(",\"serial\":")
        record.int(ledger.serial)
        record.raw(",\"format\":")
        record.int(StateFileFormat.currentVersion)
        record.raw("}\n")
        return record.bytes
    }
}
