import FCMCore
import FCMState
import Foundation
import Testing

@Suite struct JournalTests {
    let a = Registration(value: "a:APA91b", kind: .token)
    let b = Registration(value: "b:APA91b", kind: .token)
    let f = Registration(value: "cR1rjyj4_KcAPA91bGusQ2", kind: .fid)

    func journal(_ lineage: String, _ entries: [JournalEntry], run: String = "run1") -> [UInt8] {
        var bytes = JournalFormat.encode(JournalFormat.RunHeader(run: run, lineage: lineage, baseSerial: 1, started: Date(timeIntervalSince1970: 0)))
        JournalFormat.encode(entries, into: &bytes)
        return bytes
    }

    @Test(arguments: [
        JournalEntry.intent(id: 1, .subscribed(topic: "news", registration: Registration(value: "a:APA91b\"q\\", kind: .token))),
        .intent(id: 2, .unsubscribed(topic: "t%1", registration: Registration(value: "cR1rjyj4_KcAPA91bGusQ2", kind: .fid))),
        .intent(id: 3, .group(name: "fam", members: [Registration(value: "x:APA91b", kind: .token)])),
        .done(ids: [1, 2, 30]),
        .gone(ids: [4]),
        .done(ids: [5], after: 7),
        .gone(ids: [6, 8], after: 8),
    ])
    func linesDecodeToTheSameEntry(entry: JournalEntry) throws {
        var bytes: [UInt8] = []
        JournalFormat.encode([entry], into: &bytes)
        #expect(bytes.last == UInt8(ascii: "\n"))
        #expect(try JournalFormat.decodeLine(bytes.dropLast()) == .entry(entry))
    }

    @Test func completionsBecomeRecordsAndOpenIntentsBecomePending() throws {
        let bytes = journal(
            "L",
            [
                .intent(id: 1, .subscribed(topic: "news", registration: a)),
                .intent(id: 2, .subscribed(topic: "news", registration: b)),
                .intent(id: 3, .subscribed(topic: "news", registration: f)),
                .intent(id: 4, .group(name: "fam", members: [a])),
                .done(ids: [1]), .gone(ids: [3]),
            ])
        let snapshot = try StateAssembly.snapshot(stored: nil, journal: bytes, statePath: "s", journalPath: "j")
        #expect(snapshot.ledger.lineage == "L")
        #expect(snapshot.version == nil)
        #expect(snapshot.ledger.managedSubscribers(of: "news") == [a])
        #expect(snapshot.ledger.pending.subscriptions == ["news": [b]])
        #expect(snapshot.ledger.pending.groups == ["fam"])
        #expect(snapshot.pendingIntents == 2)
        #expect(snapshot.needsWrite)
    }

    @Test func tornLastLineIsIgnoredWithAWarning() throws {
        var bytes = journal("L", [.intent(id: 1, .subscribed(topic: "news", registration: a)), .done(ids: [1])])
        bytes += Array(#"{"intent":2,"subscribe":"news","tok"#.utf8)
        let snapshot = try StateAssembly.snapshot(stored: nil, journal: bytes, statePath: "s", journalPath: "j")
        #expect(snapshot.ledger.managedSubscribers(of: "news") == [a])
        #expect(snapshot.warnings == ["j:4: ignored a torn last line (the run writing it was killed); FCM will be re-read for it"])
    }

    @Test func damagedLineBeforeTheEndIsAnErrorNamingIt() {
        var bytes = journal("L", [.intent(id: 1, .subscribed(topic: "news", registration: a))])
        bytes += Array("garbage\n".utf8)
        JournalFormat.encode([.done(ids: [1])], into: &bytes)
        #expect { try StateAssembly.snapshot(stored: nil, journal: bytes, statePath: "s", journalPath: "dir/state.json.journal") } throws: {
            "\($0)".hasPrefix("dir/state.json.journal:3: not a valid journal record")
        }
    }

    /// Whole lines cut from the middle parse fine one by one; the run's consecutive intent ids give them away.
    @Test func linesCutFromTheMiddleAreAnErrorNotAPartialReplay() {
        let entries: [JournalEntry] = (1...6).map { .intent(id: $0, .subscribed(topic: "news", registration: $0 % 2 == 0 ? a : b)) }
        let whole = journal("L", entries + [.done(ids: [1, 2, 3, 4, 5, 6])])
        let lines = whole.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        let withoutIntents = lines.enumerated().filter { ![3, 4].contains($0.offset) }.map(\.element)
        let cut = Array(withoutIntents.joined(separator: [UInt8(ascii: "\n")]))
        #expect { try StateAssembly.snapshot(stored: nil, journal: cut, statePath: "s", journalPath: "j") } throws: {
            "\($0)".hasPrefix("j:4: intent 5 follows intent 2: lines are missing from the middle of the journal")
        }
        let headless = journal("L", [.intent(id: 2, .subscribed(topic: "news", registration: a))])
        #expect { try StateAssembly.snapshot(stored: nil, journal: headless, statePath: "s", journalPath: "j") } throws: {
            "\($0)".hasPrefix("j:2: intent 2 follows intent 0")
        }
        let unknownCompletion = journal("L", [.intent(id: 1, .subscribed(topic: "news", registration: a)), .done(ids: [1, 2])])
        #expect { try StateAssembly.snapshot(stored: nil, journal: unknownCompletion, statePath: "s", journalPath: "j") } throws: {
            "\($0)".hasPrefix("j:3: a completion names intent 2, which the journal does not hold")
        }
        #expect((try? StateAssembly.snapshot(stored: nil, journal: whole, statePath: "s", journalPath: "j")) != nil)
    }

    /// The last intent of a window, cut, leaves no gap in the ids when only a completion line follows it
    /// (completions written on their own, then the run killed): the line's `after` shows it.
    @Test func anIntentCutBeforeACompletionLineIsAnError() throws {
        let intents: [JournalEntry] = (1...3).map { .intent(id: $0, .subscribed(topic: "news", registration: [a, b, f][$0 - 1])) }
        let whole = journal("L", intents + [.done(ids: [1, 2], after: 3)])
        let lines = whole.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        let cut = Array(lines.enumerated().filter { $0.offset != 3 }.map(\.element).joined(separator: [UInt8(ascii: "\n")]))
        #expect { try StateAssembly.snapshot(stored: nil, journal: cut, statePath: "s", journalPath: "j") } throws: {
            "\($0)".hasPrefix("j:4: a completion line written after intent 3 follows intent 2: lines are missing from the middle")
        }
        let goneAfter = journal("L", Array(intents.prefix(2)) + [.gone(ids: [1], after: 3)])
        #expect { try StateAssembly.snapshot(stored: nil, journal: goneAfter, statePath: "s", journalPath: "j") } throws: {
            "\($0)".hasPrefix("j:4: a completion line written after intent 3 follows intent 2")
        }
        let snapshot = try StateAssembly.snapshot(stored: nil, journal: whole, statePath: "s", journalPath: "j")
        #expect(snapshot.ledger.managedSubscribers(of: "news") == [a, b])
        #expect(snapshot.ledger.pending.subscriptions == ["news": [f]])
        // More intents than the line names is no loss (a write that failed part way before it), and a journal
        // written before completion lines said `after` still reads.
        let moreIntents = journal("L", intents + [.done(ids: [1, 2], after: 1)])
        #expect(try StateAssembly.snapshot(stored: nil, journal: moreIntents, statePath: "s", journalPath: "j").pendingIntents == 1)
        let older = journal("L", intents + [.done(ids: [1, 2])])
        #expect(try StateAssembly.snapshot(stored: nil, journal: older, statePath: "s", journalPath: "j").pendingIntents == 1)
    }

    /// A bucket's journal can begin with late segments of a run that lost its lock (no header). If the next
    /// run's header is cut, its intents, numbered from 1 again, must not take the places of the late ones.
    @Test func idsStartingAgainWithoutAHeaderLeaveTheEarlierIntentsPending() throws {
        let x = Registration(value: "x:APA91b", kind: .token)
        var late: [UInt8] = []
        JournalFormat.encode([.intent(id: 3, .subscribed(topic: "news", registration: a))], into: &late)
        let next: [JournalEntry] =
            [b, f, x].enumerated().map { .intent(id: $0.offset + 1, .subscribed(topic: "news", registration: $0.element)) }
            + [.done(ids: [1, 2, 3], after: 3)]
        let whole = late + journal("L", next, run: "run2")
        let lines = whole.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        let headerCut = Array(lines.enumerated().filter { $0.offset != 1 }.map(\.element).joined(separator: [UInt8(ascii: "\n")]))
        let stored = try StateFileFormat.decode(StateFileFormat.encode(Ledger(lineage: "L", serial: 1)), source: "s")
        for bytes in [whole, headerCut] {
            let snapshot = try StateAssembly.snapshot(stored: stored, journal: bytes, statePath: "s", journalPath: "j")
            #expect(snapshot.ledger.pending.subscriptions["news"] == [a])
            #expect(snapshot.ledger.managedSubscribers(of: "news") == [b, f, x])
        }
    }

    @Test func anAfterThatIsNotANumberIsDamage() {
        var bytes = journal("L", [.intent(id: 1, .subscribed(topic: "news", registration: a))])
        bytes += Array(#"{"done":[1],"after":"1"}"#.utf8) + [UInt8(ascii: "\n")]
        JournalFormat.encode([.intent(id: 2, .subscribed(topic: "news", registration: b))], into: &bytes)
        #expect { try StateAssembly.snapshot(stored: nil, journal: bytes, statePath: "s", journalPath: "j") } throws: {
            "\($0)".hasPrefix("j:3: not a valid journal record")
        }
    }

    /// The reservation is sized from the plan: it covers what the journal of its longest names and largest
    /// group steps takes, escaping included (a flat 400 bytes per operation did not).
    @Test func theJournalBudgetCoversLongNamesAndFullGroupSteps() {
        let topic = String(repeating: "t", count: 900)
        let quoted = (0..<3).map { Registration(value: "\($0)" + String(repeating: "\"", count: 4000), kind: .token) }
        let members = (0..<20).map { Registration(value: "\($0)" + String(repeating: "\\", count: 4090), kind: .token) }
        let steps: [GroupStep] = [.create(Array(members[..<10])), .add(Array(members[10...]))]
        let plan = Plan(
            groups: [
                GroupChange(name: String(repeating: "\"", count: 300), action: .create, steps: steps, added: members, removed: [], unchanged: 0)
            ],
            topics: [TopicChange(name: topic, ownership: .additive, added: quoted, removed: [], unchanged: 0)])
        var written = JournalFormat.encode(JournalFormat.RunHeader(run: "r", lineage: "L", baseSerial: 1, started: Date()))
        var entries: [JournalEntry] = []
        var held: [Registration] = []
        for (index, step) in steps.enumerated() {
            held += step.registrations
            entries.append(.intent(id: index + 1, .group(name: plan.groups[0].name, members: held)))
        }
        for (index, registration) in quoted.enumerated() {
            entries.append(.intent(id: 3 + index, .subscribed(topic: topic, registration: registration)))
        }
        entries.append(.done(ids: Array(1...5)))
        JournalFormat.encode(entries, into: &written)
        #expect(JournalBudget.bytes(for: plan) >= written.count, "\(JournalBudget.bytes(for: plan)) < \(written.count)")
        #expect(written.count > 400 * 5, "a flat 400 bytes per operation would not have covered it")
    }

    @Test func journalOfAnotherLineageIsRefused() throws {
        let stored = try StateFileFormat.decode(StateFileFormat.encode(Ledger(lineage: "mine", serial: 3)), source: "s")
        #expect {
            try StateAssembly.snapshot(stored: stored, journal: journal("theirs", []), statePath: "s", journalPath: "j")
        } throws: { "\($0)".contains("belongs to state lineage theirs, not mine") }
    }

    /// A write folds the journal in and names its runs: if the journal's removal is lost, the runs are
    /// not replayed twice (which could resurrect a record removed since).
    @Test func runsAlreadyMergedAreSkipped() throws {
        var ledger = Ledger(lineage: "L", serial: 3)
        ledger.recordSubscription(a, topic: "news")
        let stored = try StateFileFormat.decode(StateFileFormat.encode(ledger, mergedRuns: ["run1"]), source: "s")
        let bytes = journal("L", [.intent(id: 1, .subscribed(topic: "gone", registration: b)), .done(ids: [1])], run: "run1")
        let snapshot = try StateAssembly.snapshot(stored: stored, journal: bytes, statePath: "s", journalPath: "j")
        #expect(snapshot.ledger.topics == ["news": [a]])
    }
}
