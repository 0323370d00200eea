import FCMCore
import Foundation

/// The state journal: JSON lines appended while a run works, folded into the state by its next write.
///
///     {"run":"3f…","lineage":"…","base_serial":4,"started":"2026-11-23T19:40:00Z"}
///     {"intent":1,"subscribe":"news","token":"…"}     before the request is sent
///     {"intent":2,"group":"fam","members":[{"fid":"…"}]}
///     {"done":[1,2],"after":2}                          after FCM said yes
///     {"gone":[3],"after":3}                            FCM no longer knows the registration
///
/// Intent ids count within their run; `after` is the last intent id written before the completion line. A
/// backend that cannot append (object storage) writes the same lines in segments.
package enum JournalFormat {
    package struct RunHeader: Hashable, Sendable {
        package var run: String
        package var lineage: String
        package var baseSerial: Int
        package var started: Date

        package init(run: String, lineage: String, baseSerial: Int, started: Date) {
            self.run = run
            self.lineage = lineage
            self.baseSerial = baseSerial
            self.started = started
        }
    }

    package static func encode(_ header: RunHeader) -> [UInt8] {
        var out = JSONWriter(capacity: 160)
        out.raw("{\"run\":")
        out.string(header.run)
        out.raw(",\"lineage\":")
        out.string(header.lineage)
        out.raw(",\"base_serial\":")
        out.int(header.baseSerial)
        out.raw(",\"started\":")
        out.string(header.started.ISO8601Format())
        out.raw("}\n")
        return out.bytes
    }

    package static func encode(_ entries: [JournalEntry], into out: inout [UInt8]) {
        var writer = JSONWriter()
        swap(&writer.bytes, &out)
        defer { swap(&writer.bytes, &out) }
        func registration(_ value: Registration) {
            writer.raw(value.kind == .fid ? "\"fid\":" : "\"token\":")
            value.withUTF8 { writer.string(utf8: $0) }
        }
        func ids(_ label: StaticString, _ values: [Int], after: Int?) {
            guard !values.isEmpty else { return }
            writer.raw(label)
            for (index, id) in values.enumerated() {
                if index > 0 { writer.raw(",") }
                writer.int(id)
            }
            writer.raw("]")
            if let after {
                writer.raw(",\"after\":")
                writer.int(after)
            }
            writer.raw("}\n")
        }
        for entry in entries {
            switch entry {
            case .intent(let id, let event):
                writer.raw("{\"intent\":")
                writer.int(id)
                switch event {
                case .subscribed(let topic, let value):
                    writer.raw(",\"subscribe\":")
                    writer.string(topic)
                    writer.raw(",")
                    registration(value)
                case .unsubscribed(let topic, let value):
                    writer.raw(",\"unsubscribe\":")
                    writer.string(topic)
                    writer.raw(",")
                    registration(value)
                case .group(let name, let members):
                    writer.raw(",\"group\":")
                    writer.string(name)
                    writer.raw(",\"members\":[")
                    for (index, member) in members.enumerated() {
                        writer.raw(index == 0 ? "{" : ",{")
                        registration(member)
                        writer.raw("}")
                    }
                    writer.raw("]")
                }
                writer.raw("}\n")
            case .done(let values, let after): ids("{\"done\":[", values, after: after)
            case .gone(let values, let after): ids("{\"gone\":[", values, after: after)
            }
        }
    }

    package enum Line: Hashable, Sendable {
        case run(RunHeader)
        case entry(JournalEntry)
    }

    package static func decodeLine(_ bytes: some Collection<UInt8>) throws -> Line {
        let value = try JSONParser.parse(bytes)
        if let run = value["run"]?.string {
            guard let lineage = value["lineage"]?.string, let base = value["base_serial"]?.int else {
                throw JSONParseError(offset: 0, reason: "a run header without lineage or base_serial")
            }
            let started = value["started"]?.string.flatMap { try? Date($0, strategy: .iso8601) } ?? Date(timeIntervalSince1970: 0)
            return .run(RunHeader(run: run, lineage: lineage, baseSerial: base, started: started))
        }
        if let id = value["intent"]?.int {
            func registration(_ object: JSONValue) throws -> Registration {
                if let fid = object["fid"]?.string { return Registration(value: fid, kind: .fid) }
                if let token = object["token"]?.string { return Registration(value: token, kind: .token) }
                throw JSONParseError(offset: 0, reason: "an intent without a registration")
            }
            if let topic = value["subscribe"]?.string {
                return .entry(.intent(id: id, .subscribed(topic: topic, registration: try registration(value))))
            }
            if let topic = value["unsubscribe"]?.string {
                return .entry(.intent(id: id, .unsubscribed(topic: topic, registration: try registration(value))))
            }
            if let name = value["group"]?.string, let members = value["members"]?.array {
                return .entry(.intent(id: id, .group(name: name, members: try members.map(registration))))
            }
            throw JSONParseError(offset: 0, reason: "an intent of an unknown kind")
        }
        func ids(_ list: [JSONValue]) throws -> [Int] {
            try list.map { item in
                guard let id = item.int else { throw JSONParseError(offset: 0, reason: "an id that is not a number") }
                return id
            }
        }
        let after = value["after"]?.int
        if value["after"] != nil, after == nil { throw JSONParseError(offset: 0, reason: "an `after` that is not a number") }
        if let done = value["done"]?.array { return .entry(.done(ids: try ids(done), after: after)) }
        if let gone = value["gone"]?.array { return .entry(.gone(ids: try ids(gone), after: after)) }
        throw JSONParseError(offset: 0, reason: "not a journal record")
    }
}

/// Folds journal lines over a ledger: completions become records; intents left without one become
/// pending changes for the next refresh to settle.
package struct JournalReplayer {
    package private(set) var ledger: Ledger
    package private(set) var entries = 0
    package private(set) var runs: [String] = []
    private let skippedRuns: Set<String>
    private var skipping = false
    private var open: [Int: LedgerEvent] = [:]
    private var unresolved: [LedgerEvent] = []
    /// The run's last intent id: a run numbers its intents 1, 2, 3… in the order it writes them, so a gap
    /// or a completion of an id not yet seen means lines were cut from the journal, not torn by a crash.
    private var lastIntent = 0
    /// Whether a run header was read. Segments without one that come first (GCS) belong to a run already
    /// folded into the state, written late by a holder that lost its lock: their ids cannot be checked.
    private var inRun = false

    package init(ledger: Ledger, skippingRuns: Set<String> = []) {
        self.ledger = ledger
        self.skippedRuns = skippingRuns
    }

    /// Throws when a line refers to a run of another lineage: that journal belongs to another state.
    package mutating func apply(_ line: JournalFormat.Line, source: String) throws {
        switch line {
        case .run(let header):
            closeRun()
            guard header.lineage == ledger.lineage else {
                throw StateError(
                    "\(source): the journal belongs to state lineage \(header.lineage), not \(ledger.lineage); "
                        + "move it aside if the state was replaced on purpose")
            }
            skipping = skippedRuns.contains(header.run)
            lastIntent = 0
            inRun = true
            if !skipping { runs.append(header.run) }
        case .entry(let entry):
            if skipping { return }
            entries += 1
            switch entry {
            case .intent(let id, let event):
                guard id == lastIntent + 1 || !inRun else { throw Self.cut(source, "intent \(id) follows intent \(lastIntent)") }
                // Without a header, ids that start again belong to another run (its header cut, or late
                // segments of a second run): the first run's open intents stay pending, not overwritten.
                if !inRun, id <= lastIntent { closeRun() }
                lastIntent = id
                open[id] = event
            case .done(let ids, let after):
                try checkWritten(after, source)
                for id in ids {
                    guard id <= lastIntent || !inRun else { throw Self.unknownCompletion(source, id) }
                    open.removeValue(forKey: id)?.apply(to: &ledger)
                }
            case .gone(let ids, let after):
                try checkWritten(after, source)
                for id in ids {
                    guard id <= lastIntent || !inRun else { throw Self.unknownCompletion(source, id) }
                    open.removeValue(forKey: id)?.applyGone(to: &ledger)
                }
            }
        }
    }

    /// Fewer intents than the line says were written is a cut. More is not written by fcmctl (a failed
    /// write ends the run's writing) and would lose nothing, so it is let through.
    private func checkWritten(_ after: Int?, _ source: String) throws {
        guard let after, inRun, !skipping, after > lastIntent else { return }
        throw Self.cut(source, "a completion line written after intent \(after) follows intent \(lastIntent)")
    }

    static func unknownCompletion(_ source: String, _ id: Int) -> StateError {
        cut(source, "a completion names intent \(id), which the journal does not hold")
    }

    static func cut(_ source: String, _ what: String) -> StateError {
        StateError(
            "\(source): \(what): lines are missing from the middle of the journal (it was cut or edited), so operations "
                + "it recorded may be unknown. Restore the journal from a backup; or, to accept the loss, move it aside and "
                + "run plan: FCM is re-read for everything the state still records")
    }

    private mutating func closeRun() {
        unresolved.append(contentsOf: open.sorted { $0.key < $1.key }.map(\.value))
        open = [:]
    }

    /// The ledger with unresolved intents marked pending, and how many there were.
    package mutating func finish() -> (Ledger, pending: Int) {
        closeRun()
        for event in unresolved { event.markPending(in: &ledger) }
        let count = unresolved.count
        unresolved = []
        return (ledger, count)
    }
}
