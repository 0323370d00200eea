import FCMCore

package struct ApplyFailure: Sendable, Hashable {
    package var address: String
    package var message: String
}

package struct ApplyReport: Sendable {
    package var requestsSucceeded = 0
    package var failures: [ApplyFailure] = []
    /// Registrations FCM no longer knows, met while applying: drift, reported with a suggestion.
    package var gone: [ApplyFailure] = []
    package var completed: [String: Int] = [:]
    /// Operations never sent because the run had to stop (the journal could not be written, the lock was lost).
    package var notAttempted = 0
    /// Why the run stopped early, if it did.
    package var stopped: String?

    package var succeeded: Bool { failures.isEmpty && stopped == nil }
}

/// Carries out a plan: group steps in order (each group's size stays within 1...20), topic changes with
/// bounded concurrency. No request is sent before its intent is in the journal; completions follow. Intents
/// are written ahead a window at a time and completions gathered, so the journal costs a write per window,
/// not per request. The ledger is updated here, by one owner, as answers arrive.
package struct Applier: Sendable {
    package let service: any FCMService
    package let parallelism: Int
    /// Intents written ahead in one journal write.
    package let window: Int

    package init(service: any FCMService, parallelism: Int = 64, window: Int? = nil) {
        self.service = service
        self.parallelism = max(1, parallelism)
        self.window = max(1, window ?? max(256, parallelism))
    }

    package func apply(
        _ plan: Plan, observed: ObservedState, ledger: Ledger, journal: any StateJournal, lock: StateLock? = nil
    ) async -> (ApplyReport, Ledger) {
        let run = Run(ledger: ledger, journal: journal, lock: lock)
        for change in plan.groups {
            await applyGroup(change, observed: observed.groups[change.name], run: run)
            if run.report.stopped != nil { break }
        }
        let batches = Self.batches(plan.topics, size: service.topicBatchSize)
        if run.report.stopped == nil {
            await applyBatches(batches, run: run)
        } else {
            run.report.notAttempted += batches.reduce(0) { $0 + $1.registrations.count }
        }
        return (run.report, run.ledger)
    }

    /// One apply's mutable progress, owned by the task running it (a class: the task group's body and the
    /// helpers share it without inout captures).
    final class Run {
        var ledger: Ledger
        let journal: any StateJournal
        let lock: StateLock?
        var report = ApplyReport()
        var nextID = 1
        var completions: [JournalEntry] = []

        init(ledger: Ledger, journal: any StateJournal, lock: StateLock?) {
            self.ledger = ledger
            self.journal = journal
            self.lock = lock
        }

        /// Writes `entries` (and the gathered completions) or records why the run must stop.
        func journal(_ entries: [JournalEntry]) async -> Bool {
            if let lock, lock.isLost {
                report.stopped = "the state lock \(lock.info.id) was lost (taken over or removed); stopped before sending more"
                return false
            }
            do {
                try await journal.append(completions + entries)
                completions = []
                return true
            } catch {
                report.stopped = "\(error); stopped before sending more. Every request sent has its intent recorded: the next run checks them"
                return false
            }
        }

        func completed(_ ids: [Int], gone: Bool) {
            guard !ids.isEmpty else { return }
            completions.append(gone ? .gone(ids: ids) : .done(ids: ids))
        }
    }

    func applyGroup(_ change: GroupChange, observed: ObservedGroup?, run: Run) async {
        var key = observed?.notificationKey
        var members = observed?.members ?? []
        for (index, step) in change.steps.enumerated() {
            var after = members
            switch step {
            case .create(let added), .add(let added): after.formUnion(added)
            case .remove(let removed): after.subtract(removed)
            }
            let id = run.nextID
            run.nextID += 1
            let event = LedgerEvent.group(name: change.name, members: after.sorted())
            guard await run.journal([.intent(id: id, event)]) else {
                run.report.notAttempted += change.steps.count - index
                return
            }
            do {
                key = try await service.performGroupStep(step, name: change.name, key: key)
                members = after
                event.apply(to: &run.ledger)
                run.completed([id], gone: false)
                run.report.requestsSucceeded += 1
                run.report.completed[change.address, default: 0] += 1
            } catch {
                // Later steps assumed this one happened; stop this group and let the next plan recompute.
                run.report.failures.append(ApplyFailure(address: change.address, message: "\(error)"))
                return
            }
        }
    }

    /// Registrations of one topic and one action, sent in one request where the API allows.
    package struct SubscriptionBatch: Sendable, Hashable {
        package var topic: String
        package var action: SubscriptionChange.Action
        package var registrations: [Registration]

        func event(_ registration: Registration) -> LedgerEvent {
            action == .subscribe
                ? .subscribed(topic: topic, registration: registration) : .unsubscribed(topic: topic, registration: registration)
        }
    }

    package static func batches(_ topics: [TopicChange], size: Int) -> [SubscriptionBatch] {
        var batches: [SubscriptionBatch] = []
        for topic in topics {
            for (action, members) in [(SubscriptionChange.Action.subscribe, topic.added), (.unsubscribe, topic.removed)] {
                var start = 0
                while start < members.count {
                    let end = min(start + max(1, size), members.count)
                    batches.append(SubscriptionBatch(topic: topic.name, action: action, registrations: Array(members[start..<end])))
                    start = end
                }
            }
        }
        return batches
    }

    typealias BatchResult = Result<[Registration: SubscriptionOutcome], any Error>

    struct BatchAnswer: Sendable {
        var index: Int
        var result: BatchResult
    }

    func applyBatches(_ batches: [SubscriptionBatch], run: Run) async {
        guard !batches.isEmpty else {
            _ = await run.journal([])
            return
        }
        var firstID = [Int](repeating: 0, count: batches.count)
        var intentsUpTo = 0
        var next = 0
        var inFlight = 0
        let service = self.service
        let parallelism = self.parallelism
        let window = self.window
        await withTaskGroup(of: BatchAnswer.self) { group in
            while true {
                while next < batches.count, inFlight < parallelism, run.report.stopped == nil {
                    if next == intentsUpTo {
                        var entries: [JournalEntry] = []
                        var operations = 0
                        while intentsUpTo < batches.count, operations < window {
                            let batch = batches[intentsUpTo]
                            firstID[intentsUpTo] = run.nextID
                            for registration in batch.registrations {
                                entries.append(.intent(id: run.nextID, batch.event(registration)))
                                run.nextID += 1
                            }
                            operations += batch.registrations.count
                            intentsUpTo += 1
                        }
                        guard await run.journal(entries) else { break }
                    }
                    let index = next
                    let batch = batches[index]
                    group.addTask {
                        do {
                            let outcomes = try await service.performBatch(topic: batch.topic, action: batch.action, batch.registrations)
                            return BatchAnswer(index: index, result: .success(outcomes))
                        } catch {
                            return BatchAnswer(index: index, result: .failure(error))
                        }
                    }
                    next += 1
                    inFlight += 1
                }
                guard let answer = await group.next() else { break }
                inFlight -= 1
                precondition(answer.index < batches.count, "answer \(answer.index) of \(batches.count) batches")
                record(batches[answer.index], firstID: firstID[answer.index], result: answer.result, run: run)
                // Completions ride along with the next window of intents; on their own only when they pile up.
                if run.completions.count >= window { _ = await run.journal([]) }
            }
        }
        if !run.completions.isEmpty { _ = await run.journal([]) }
        run.report.notAttempted += batches[next...].reduce(0) { $0 + $1.registrations.count }
    }

    func record(_ batch: SubscriptionBatch, firstID: Int, result: BatchResult, run: Run) {
        let address = "topic/\(batch.topic)"
        var done: [Int] = []
        var gone: [Int] = []
        for (offset, registration) in batch.registrations.enumerated() {
            var who: String { Redactor(showTokens: false)(registration) }
            let outcome: SubscriptionOutcome
            switch result {
            case .failure(let error):
                run.report.failures.append(ApplyFailure(address: address, message: "\(batch.action.rawValue) \(who): \(error)"))
                continue
            case .success(let outcomes):
                outcome = outcomes[registration] ?? .failed(code: "NO_RESULT")
            }
            let event = batch.event(registration)
            switch outcome {
            case .done:
                event.apply(to: &run.ledger)
                done.append(firstID + offset)
                run.report.requestsSucceeded += 1
                run.report.completed[address, default: 0] += 1
            case .registrationGone(let reason):
                event.applyGone(to: &run.ledger)
                gone.append(firstID + offset)
                run.report.requestsSucceeded += 1
                run.report.gone.append(
                    ApplyFailure(address: address, message: "\(who) is no longer registered (\(reason)): remove it from the manifest"))
            case .failed(let code):
                run.report.failures.append(ApplyFailure(address: address, message: "\(batch.action.rawValue) \(who): \(code)"))
            }
        }
        run.completed(done, gone: false)
        run.completed(gone, gone: true)
    }
}
