import FCMCore

/// Carries out a plan: group steps in order (each group's size stays within 1...20), topic changes with
/// bounded concurrency. No request is sent before its intent is in the journal; completions follow. Intents
/// are written ahead a window at a time and completions gathered, so the journal costs a write per window,
/// not per request. The ledger is updated here, by one owner, as answers arrive.
///
/// Journal writes and progress go through the run's `RunOutput`, on a thread of their own: the task that
/// sends waits for its intents to be written, the requests already in flight do not.
package struct Applier: Sendable {
    package let service: any FCMService
    /// How many requests are in flight at once.
    package let limit: ConcurrencyLimit
    /// Intents written ahead in one journal write.
    package let window: Int
    /// Where the tasks that send and record run (the HTTP client's thread, given by the composition root):
    /// an answer is then recorded where it arrived, without waking another thread. nil: anywhere.
    package let executor: (any TaskExecutor)?
    /// Told how many operations settled (done, gone or failed), from the writer thread: the progress line.
    package var progress: (@Sendable (ProgressCount) -> Void)?

    package init(
        service: any FCMService, limit: ConcurrencyLimit, window: Int? = nil, executor: (any TaskExecutor)? = nil,
        progress: (@Sendable (ProgressCount) -> Void)? = nil
    ) {
        self.progress = progress
        self.service = service
        self.limit = limit
        self.executor = executor
        self.window = max(1, window ?? max(256, limit.maximum))
    }

    /// `unverified`: registrations this run subscribes without having read them from FCM first (see
    /// `UnreadCreates`). FCM calling one of them unknown is a failure of its create, not drift: nothing ever
    /// showed it working, so it may be a token cut short or mistyped.
    package func apply(
        _ plan: Plan, observed: ObservedState, ledger: Ledger, journal: any StateJournal, lock: StateLock? = nil, stop: StopSignal? = nil,
        unverified: Set<Registration> = []
    ) async -> (ApplyReport, Ledger) {
        let output = RunOutput(progress: progress)
        let result = await withTaskExecutorPreference(executor) {
            await carryOut(
                plan, observed: observed, ledger: ledger, journal: journal, output: output, lock: lock, stop: stop, unverified: unverified)
        }
        await output.finish()
        return result
    }

    private func carryOut(
        _ plan: Plan, observed: ObservedState, ledger: Ledger, journal: any StateJournal, output: RunOutput, lock: StateLock?,
        stop: StopSignal?, unverified: Set<Registration>
    ) async -> (ApplyReport, Ledger) {
        let run = Run(ledger: ledger, journal: journal, output: output, lock: lock, stop: stop)
        run.unverified = unverified
        let order = Self.order(of: plan, batchSize: service.topicBatchSize)
        for change in order.groups {
            if run.mustStop() {
                run.notAttempted(change.address, .groupSteps, change.steps.flatMap(\.registrations), reason: run.report.stopped ?? "")
                continue
            }
            await applyGroup(change, observed: observed.groups[change.name], successors: plan.successors, run: run)
        }
        // Every addition before any removal, and no removal for a registration whose addition failed: a
        // topic renamed or a device moved never ends up with neither, whatever fails.
        await applyBatches(order.additions, run: run)
        // A rotated device's old registration stays subscribed while its new one is gone, could not be read, or
        // had a new subscription fail: a new token FCM does not know, or would not tell about, must not cost the
        // device the one that works.
        let unconfirmed = run.failedAdditions.union(run.goneAdditions)
        let heldForSuccessor = Set(
            plan.successors.filter { _, new in unconfirmed.contains(new) || observed.isGone(new) || observed.isUnreadable(new) }.keys)
        guard !run.failedAdditions.isEmpty || !heldForSuccessor.isEmpty else {
            await applyBatches(order.removals, run: run)
            return (run.report, run.ledger)
        }
        var removals: [SubscriptionBatches.List] = []
        for topic in plan.topics where !topic.removed.isEmpty {
            let kept = topic.removed.filter { !run.failedAdditions.contains($0) && !heldForSuccessor.contains($0) }
            let held = topic.removed.filter { run.failedAdditions.contains($0) }
            run.notAttempted(topic.address, .unsubscribe, held, reason: "kept because a new subscription of the same registration failed")
            let rotated = topic.removed.filter { heldForSuccessor.contains($0) && !run.failedAdditions.contains($0) }
            run.notAttempted(
                topic.address, .unsubscribe, rotated, reason: "kept because the device's new registration could not be subscribed")
            if !kept.isEmpty { removals.append(SubscriptionBatches.List(topic: topic.name, action: .unsubscribe, registrations: kept)) }
        }
        await applyBatches(SubscriptionBatches(removals, size: order.additions.size), run: run)
        return (run.report, run.ledger)
    }

    /// The order apply sends a plan in: each group's steps, group by group; then every addition; then every
    /// removal (fewer when an addition fails, see `carryOut`). `carryOut` walks it and `apply --dry-run` lists
    /// its `requests`, so what the dry run shows is what apply sends.
    package struct Order: Sendable {
        package var groups: [GroupChange]
        package var additions: SubscriptionBatches
        /// The removals when no addition failed.
        package var removals: SubscriptionBatches

        /// Every request, in order, when every request succeeds (a group step FCM refuses re-plans the rest
        /// of that group's steps).
        package var requests: [PlannedRequest] {
            groups.flatMap { change in change.steps.map { PlannedRequest.groupStep(change, $0) } }
                + additions.map(PlannedRequest.batch) + removals.map(PlannedRequest.batch)
        }
    }

    /// One request of an `Order`.
    package enum PlannedRequest: Sendable {
        case groupStep(GroupChange, GroupStep)
        case batch(SubscriptionBatch)
    }

    /// `batchSize`: how many registrations one subscription request may carry (the service's `topicBatchSize`).
    package static func order(of plan: Plan, batchSize: Int) -> Order {
        Order(
            groups: plan.groups, additions: batches(plan.topics, .subscribe, size: batchSize),
            removals: batches(plan.topics, .unsubscribe, size: batchSize))
    }

    /// One apply's mutable progress, owned by the task running it (a class: the task group's body and the
    /// helpers share it without inout captures).
    final class Run {
        var ledger: Ledger
        let journal: any StateJournal
        let output: RunOutput
        let lock: StateLock?
        let stop: StopSignal?
        var report = ApplyReport()
        var nextID = 1
        /// The last intent id the journal holds: completion lines carry it, so a reader can tell a cut intent.
        var journaledThrough = 0
        /// Intents answered since the journal was last written, as two lists of ids rather than an entry per
        /// change: one `done` and one `gone` line per write, however many changes it closes.
        var doneIDs: [Int] = []
        var goneIDs: [Int] = []
        var completionCount: Int { doneIDs.count + goneIDs.count }
        /// Completion lines a journal of one line per request's outcome would hold by now (a request's `done`, its
        /// `gone`): what decides when completions are written on their own, so a batch of many registrations (IID)
        /// counts as one request, not as its registrations.
        var answeredRequests = 0

        init(ledger: Ledger, journal: any StateJournal, output: RunOutput, lock: StateLock?, stop: StopSignal?) {
            self.ledger = ledger
            self.journal = journal
            self.output = output
            self.lock = lock
            self.stop = stop
        }

        /// Whether the run must send nothing more: stopped already, its lock lost, or a stop requested (a
        /// signal, `--timeout`). A stop is handled like a lost lock: what was sent is seen through.
        func mustStop() -> Bool {
            if report.stopped != nil { return true }
            if let lock, lock.isLost {
                report.stopped = "the state lock \(lock.info.id) was lost (taken over or removed); stopped before sending more"
            } else if let reason = stop?.reason {
                report.stopped = "\(reason); stopped before sending more"
                report.stopRequested = true
            }
            return report.stopped != nil
        }

        /// Writes `entries` (and the gathered completions) or records why the run must stop.
        func journal(_ entries: [JournalEntry]) async -> Bool {
            if let lock, lock.isLost {
                report.stopped = "the state lock \(lock.info.id) was lost (taken over or removed); stopped before sending more"
                return false
            }
            // A stop withholds new intents only: the completions gathered so far are still worth writing.
            if !entries.isEmpty, mustStop() { return false }
            do {
                var written: [JournalEntry] = []
                written.reserveCapacity(entries.count + 2)
                if !doneIDs.isEmpty { written.append(.done(ids: doneIDs, after: journaledThrough)) }
                if !goneIDs.isEmpty { written.append(.gone(ids: goneIDs, after: journaledThrough)) }
                written.append(contentsOf: entries)
                try await output.append(written, to: journal)
                if case .intent(let id, _)? = entries.last { journaledThrough = id }
                doneIDs.removeAll(keepingCapacity: true)
                goneIDs.removeAll(keepingCapacity: true)
                answeredRequests = 0
                return true
            } catch {
                report.stopped = "\(error); stopped before sending more. Every request sent has its intent recorded: the next run checks them"
                return false
            }
        }

        func completed(_ id: Int, gone: Bool) {
            if gone { goneIDs.append(id) } else { doneIDs.append(id) }
        }

        /// A request of one operation (a group step) answered.
        func completedRequest(_ id: Int, gone: Bool) {
            completed(id, gone: gone)
            answeredRequests += 1
        }

        /// `events` are the ledger changes the failed request would have made: when its outcome is unknown,
        /// each stays pending, so a change FCM made though no reply said so is found by the next refresh
        /// instead of being lost from the state.
        func failed(_ address: Address, _ action: OperationKind, _ registrations: [Registration], _ error: any Error, events: [LedgerEvent] = []) {
            if let error = error as? StoppedBeforeSending {
                // Never sent: FCM is as it was, and the intent without a completion is dropped with the journal
                // when the state is written.
                notAttempted(address, action, registrations, reason: report.stopped ?? error.reason)
                return
            }
            output.fail(registrations.count)
            if Applier.outcomeUnknown(error) {
                for event in events { event.markPending(in: &ledger) }
                report.unsettled += registrations.count
            }
            // The lease may be gone: nothing more may be sent, whichever request found out first.
            if let refused = error as? LeaseFence.Refused, report.stopped == nil { report.stopped = refused.description }
            // Credentials without the permission: no other request of this run can fare better.
            if let denied = error as? FCMServiceError, denied.deniesPermission, report.stopped == nil { report.stopped = denied.message }
            let status: OperationOutcome.Status
            if let error = error as? FCMServiceError {
                status = .failed(code: error.code, message: error.message, retryable: TransientStatus.all.contains(error.status))
            } else {
                status = .failed(code: "TRANSPORT", message: "\(error)", retryable: true)
            }
            report.outcomes.append(OperationOutcome(address: address, action: action, registrations: registrations, status: status))
        }

        func notAttempted(_ address: Address, _ action: OperationKind, _ registrations: [Registration], reason: String) {
            guard !registrations.isEmpty else { return }
            report.outcomes.append(
                OperationOutcome(address: address, action: action, registrations: registrations, status: .notAttempted(reason: reason)))
        }

        /// Registrations whose new subscription failed in this run: their old ones are kept.
        var failedAdditions = Set<Registration>()
        /// Registrations FCM called gone when subscribing them in this run.
        var goneAdditions = Set<Registration>()
        /// Registrations subscribed without a read first: FCM calling one unknown fails its create.
        var unverified = Set<Registration>()
    }

    /// `successors`: a rotated device's old registration → its new one; the old stays a member while the new
    /// one turns out gone.
    func applyGroup(_ change: GroupChange, observed: ObservedGroup?, successors: [Registration: Registration], run: Run) async {
        var key = observed?.notificationKey
        var members = observed?.members ?? []
        var target = members.union(change.added).subtracting(change.removed)
        var steps = change.steps[...]
        while let step = steps.popFirst() {
            defer { run.output.advance(1) }
            var after = members
            switch step {
            case .create(let added), .add(let added): after.formUnion(added)
            case .remove(let removed): after.subtract(removed)
            }
            let id = run.nextID
            run.nextID += 1
            let event = LedgerEvent.group(name: change.name, members: after.sorted())
            guard await run.journal([.intent(id: id, event)]) else {
                run.notAttempted(
                    change.address, step.operation, step.registrations + steps.flatMap(\.registrations), reason: run.report.stopped ?? "")
                return
            }
            do {
                let answered = try await service.performGroupStep(step, name: change.name, key: key)
                // Only a remove of the last members may leave the group without a key: any other answer without one
                // says nothing of what FCM did, and the step stays pending until a run reads the group by name.
                if answered == nil, !after.isEmpty {
                    throw FCMServiceError(
                        status: 200, code: "BAD_RESPONSE", message: "\(change.address) \(step.operation): FCM answered without a notification_key"
                    )
                }
                key = answered
                members = after
                event.apply(to: &run.ledger)
                run.completedRequest(id, gone: false)
                run.report.requestsSucceeded += 1
                run.report.completed[change.address, default: 0] += 1
            } catch let error as FCMServiceError where error.refusal == .noValidRegistrations && !step.registrations.isEmpty {
                // Members that were uninstalled: find which, drop them from the group's target, and re-plan
                // the rest of its steps so the group still ends as declared, minus them.
                run.completedRequest(id, gone: true)
                let gone = await goneRegistrations(step.registrations)
                guard !gone.isEmpty else {
                    run.failed(change.address, step.operation, step.registrations, error)
                    return
                }
                for registration in gone.sorted() {
                    run.report.outcomes.append(
                        OperationOutcome(
                            address: change.address, action: step.operation, registrations: [registration], status: .gone(reason: error.code)))
                }
                target.subtract(gone)
                // A device whose new registration is gone keeps its old one; and a group that is not being deleted
                // is never emptied because its new members turned out gone: FCM would delete it, key and all.
                target.formUnion(successors.filter { gone.contains($0.value) && members.contains($0.key) }.keys)
                if target.isEmpty && change.action != .delete { target = members }
                let kept = members.intersection(target).intersection(change.removed)
                if !kept.isEmpty {
                    run.notAttempted(
                        change.address, .remove, kept.sorted(), reason: "kept because the members replacing them are not registered with FCM")
                }
                steps = GroupStepPlanner.steps(from: members, to: target)[...]
                // A refused request may have spent the key: read a fresh one for the next step.
                if !members.isEmpty { key = (try? await service.groupKey(name: change.name)) ?? key }
            } catch {
                // Later steps assumed this one happened; stop this group and let the next plan recompute.
                run.failed(change.address, step.operation, step.registrations, error, events: [event])
                if !steps.isEmpty {
                    run.notAttempted(change.address, .groupSteps, steps.flatMap(\.registrations), reason: "an earlier step of this group failed")
                }
                return
            }
        }
    }

    /// A refusal FCM answered (4xx) changed nothing; anything else (no answer, a lost reply, a timeout, a
    /// 5xx, an unreadable 2xx) may have been carried out before it failed.
    static func outcomeUnknown(_ error: any Error) -> Bool {
        guard let error = error as? FCMServiceError else { return true }
        // A 2xx whose body made no sense (an HTML page from a proxy, say) is no refusal either.
        return error.status >= 500 || error.status == 0 || (200..<300).contains(error.status)
    }

    /// Which of `registrations` FCM says are gone (read one by one: rare, and only after a refusal).
    func goneRegistrations(_ registrations: [Registration]) async -> Set<Registration> {
        var gone = Set<Registration>()
        for registration in registrations {
            if case .gone? = try? await service.subscriptions(of: registration) { gone.insert(registration) }
        }
        return gone
    }

    /// Every addition (or every removal) of `topics`, in batches of `size`: what apply and its dry run send.
    package static func batches(_ topics: [TopicChange], _ action: SubscriptionChange.Action, size: Int) -> SubscriptionBatches {
        SubscriptionBatches(
            topics.compactMap { topic in
                let members = action == .subscribe ? topic.added : topic.removed
                return members.isEmpty ? nil : SubscriptionBatches.List(topic: topic.name, action: action, registrations: members)
            }, size: size)
    }

    typealias BatchResult = Result<BatchOutcomes, any Error>

    /// What FCM answered for each registration of a batch; a batch of one (every v1 change) keeps its answer
    /// without a dictionary.
    enum BatchOutcomes: Sendable {
        case one(Registration, SubscriptionOutcome?)
        case each([Registration: SubscriptionOutcome])

        subscript(_ registration: Registration) -> SubscriptionOutcome? {
            switch self {
            case .one(let only, let outcome): only == registration ? outcome : nil
            case .each(let outcomes): outcomes[registration]
            }
        }
    }

    struct BatchAnswer: Sendable {
        var index: Int
        var result: BatchResult
    }

    func applyBatches(_ batches: SubscriptionBatches, run: Run) async {
        guard !batches.isEmpty else {
            if run.completionCount > 0 { _ = await run.journal([]) }
            return
        }
        guard !run.mustStop() else {
            notAttempted(batches, from: 0, run: run)
            return
        }
        // Intents are numbered in batch order, so a batch's first id is computed, not stored per batch.
        let firstIDBase = run.nextID
        var intentsUpTo = 0
        var next = 0
        var inFlight = 0
        let service = self.service
        let limit = self.limit
        var allowed = limit.current
        let window = self.window
        await withTaskGroup(of: BatchAnswer.self) { group in
            while true {
                while next < batches.count, inFlight < allowed, !run.mustStop() {
                    if next == intentsUpTo {
                        var entries: [JournalEntry] = []
                        var operations = 0
                        while intentsUpTo < batches.count, operations < window {
                            let batch = batches[intentsUpTo]
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
                            if batch.registrations.count == 1, let only = batch.registrations.first {
                                let outcome = try await service.performOne(topic: batch.topic, action: batch.action, only)
                                return BatchAnswer(index: index, result: .success(.one(only, outcome)))
                            }
                            let outcomes = try await service.performBatch(topic: batch.topic, action: batch.action, Array(batch.registrations))
                            return BatchAnswer(index: index, result: .success(.each(outcomes)))
                        } catch {
                            return BatchAnswer(index: index, result: .failure(error))
                        }
                    }
                    next += 1
                    inFlight += 1
                }
                guard let answer = await group.next() else { break }
                inFlight -= 1
                allowed = limit.answered()
                record(batches[answer.index], firstID: firstIDBase + batches.firstOperation(of: answer.index), result: answer.result, run: run)
                // Completions ride along with the next window of intents; on their own only when they pile up.
                if run.answeredRequests >= window { _ = await run.journal([]) }
            }
        }
        if run.completionCount > 0 { _ = await run.journal([]) }
        notAttempted(batches, from: next, run: run)
    }

    /// What was never sent, one outcome per topic rather than per batch.
    func notAttempted(_ batches: SubscriptionBatches, from index: Int, run: Run) {
        for part in batches.remaining(from: index) {
            run.notAttempted(
                part.address, part.action.operation, Array(part.registrations), reason: run.report.stopped ?? "the run stopped")
        }
    }

    func record(_ batch: SubscriptionBatch, firstID: Int, result: BatchResult, run: Run) {
        run.output.advance(batch.registrations.count)
        let address = batch.address
        let outcomes: BatchOutcomes
        switch result {
        case .failure(let error):
            run.failed(address, batch.action.operation, Array(batch.registrations), error, events: batch.registrations.map(batch.event))
            if batch.action == .subscribe { run.failedAdditions.formUnion(batch.registrations) }
            return
        case .success(let answers):
            outcomes = answers
            // A request FCM answered "already exists" (v1: one registration) is FCM's no, though the goal holds.
            if !batch.registrations.allSatisfy({ answers[$0] == .alreadyExists }) { run.report.requestsSucceeded += 1 }
            run.answeredRequests += 1
        }
        for (offset, registration) in batch.registrations.enumerated() {
            let event = batch.event(registration)
            switch outcomes[registration] ?? .failed(code: "NO_RESULT") {
            case .done:
                event.apply(to: &run.ledger)
                run.completed(firstID + offset, gone: false)
                run.report.completed[address, default: 0] += 1
            case .alreadyExists where run.ledger.topics[batch.topic]?.contains(registration) == true:
                // fcmctl's own record says it made this one: it still holds, and stays recorded.
                run.completed(firstID + offset, gone: false)
                run.report.completed[address, default: 0] += 1
            case .alreadyExists:
                // Someone else's subscription: the goal holds, but fcmctl did not make it and must never remove it,
                // so it is not recorded. The journal closes the intent as settled with no record (`gone`), which is
                // what a replay must do with it too.
                event.applyGone(to: &run.ledger)
                run.completed(firstID + offset, gone: true)
                run.report.outcomes.append(
                    OperationOutcome(address: address, action: batch.action.operation, registrations: [registration], status: .alreadySubscribed))
            case .registrationGone(let reason) where batch.action == .subscribe && run.unverified.contains(registration):
                event.applyGone(to: &run.ledger)
                run.completed(firstID + offset, gone: true)
                run.goneAdditions.insert(registration)
                run.failedAdditions.insert(registration)
                run.output.fail(1)
                run.report.outcomes.append(
                    OperationOutcome(
                        address: address, action: batch.action.operation, registrations: [registration],
                        status: .failed(code: reason, message: Self.unverifiedGone, retryable: false)))
            case .registrationGone(let reason):
                event.applyGone(to: &run.ledger)
                run.completed(firstID + offset, gone: true)
                if batch.action == .subscribe { run.goneAdditions.insert(registration) }
                run.report.outcomes.append(
                    OperationOutcome(address: address, action: batch.action.operation, registrations: [registration], status: .gone(reason: reason)))
            case .failed(let code, let message):
                run.output.fail(1)
                run.report.outcomes.append(
                    OperationOutcome(
                        address: address, action: batch.action.operation, registrations: [registration],
                        status: .failed(
                            code: code, message: message ?? Self.batchRefusal(code), retryable: SubscriptionOutcome.retryableCodes.contains(code))))
                if batch.action == .subscribe { run.failedAdditions.insert(registration) }
            case .unsettled(let code, let message):
                // Its retry may have been carried out: pending, like a whole request whose answer was lost.
                run.output.fail(1)
                event.markPending(in: &run.ledger)
                run.report.unsettled += 1
                run.report.outcomes.append(
                    OperationOutcome(
                        address: address, action: batch.action.operation, registrations: [registration],
                        status: .failed(code: code, message: message, retryable: true)))
                if batch.action == .subscribe { run.failedAdditions.insert(registration) }
            }
        }
    }

    static let unverifiedGone =
        "FCM does not know this registration, which was not read before this create: a token cut short or mistyped, or an app "
        + "uninstalled since? Nothing else was changed for it; correct the manifest, or run plan, which reads it first"

    static func batchRefusal(_ code: String) -> String {
        code == "PERMISSION_DENIED"
            ? "the registration belongs to another Firebase project than the credentials act for: check project.id and "
                + "project.senderId in the manifest, and which project the credentials belong to"
            : "FCM refused this registration in the batch"
    }
}
