import FCMCore

/// Reads the live state of everything fcmctl knows about: declared and recorded groups, and every
/// registration declared in a topic or recorded in the ledger. FCM cannot list a topic's subscribers,
/// so nothing beyond those can be seen.
package struct Refresher: Sendable {
    package let service: any FCMService
    /// How many reads are in flight at once; shared with the apply that follows, which then need not find
    /// the server's latency again.
    package let limit: ConcurrencyLimit
    /// Where the reading tasks run (the HTTP client's thread, given by the composition root): an answer is
    /// then taken in where it arrived, without waking another thread. nil: anywhere.
    package let executor: (any TaskExecutor)?
    /// Told of registrations and groups read, from a writer thread of the refresh's own (`RunOutput`): the
    /// progress line, which must not hold up the reads.
    package var progress: (@Sendable (ProgressCount) -> Void)?

    package init(
        service: any FCMService, limit: ConcurrencyLimit, executor: (any TaskExecutor)? = nil, progress: (@Sendable (ProgressCount) -> Void)? = nil
    ) {
        self.progress = progress
        self.service = service
        self.limit = limit
        self.executor = executor
    }

    /// Only what `plan` touches: its groups and the registrations its topic changes name, but `skipping`. What a
    /// saved plan re-reads before it runs.
    package func refresh(touchedBy plan: Plan, skipping: Set<Registration> = []) async throws -> ObservedState {
        var registrations = Set<Registration>()
        for topic in plan.topics {
            registrations.formUnion(topic.added)
            registrations.formUnion(topic.removed)
        }
        return try await refresh(groups: Set(plan.groups.map(\.name)), registrations: registrations.subtracting(skipping))
    }

    /// Reads exactly these groups and registrations; `checkedGroups` says which groups were looked up.
    package func refresh(groups: Set<String>, registrations: Set<Registration>) async throws -> ObservedState {
        let output = RunOutput(progress: progress)
        do {
            let observed = try await withTaskExecutorPreference(executor) {
                try await read(groups: groups, registrations: registrations, output: output)
            }
            await output.finish()
            return observed
        } catch {
            await output.finish()
            throw error
        }
    }

    private func read(groups: Set<String>, registrations: Set<Registration>, output: RunOutput) async throws -> ObservedState {
        var observed = ObservedState(checkedGroups: groups)
        // Groups are read side by side too: a fleet's groups would otherwise cost two round trips each, in turn.
        let service = self.service
        let found = try await BoundedConcurrency.map(groups.sorted(), limit: limit) { name -> ObservedGroup? in
            defer { output.advance(1) }
            guard let key = try await service.groupKey(name: name) else { return nil }
            let members = try await service.groupMembers(name: name, key: key)
            return ObservedGroup(name: name, notificationKey: key, members: members ?? [], membersFromFCM: members != nil)
        }
        for group in found { if let group { observed.groups[group.name] = group } }
        (observed.registrations, observed.unreadable) = try await statuses(of: registrations, output: output)
        return observed
    }

    /// One registration that cannot be read does not sink the refresh: it is set aside with its reason.
    func statuses(
        of registrations: Set<Registration>, output: RunOutput
    ) async throws -> ([Registration: RegistrationStatus], [Registration: String]) {
        let results = try await BoundedConcurrency.map(registrations.sorted(), limit: limit) { registration in
            defer { output.advance(1) }
            do {
                return ReadOutcome(registration: registration, status: try await service.subscriptions(of: registration), failure: nil)
            } catch let error as FCMServiceError where error.deniesPermission {
                // Not this registration's trouble: the credentials may read none. The refresh ends here.
                throw error
            } catch {
                return ReadOutcome(registration: registration, status: nil, failure: "\(error)")
            }
        }
        var statuses: [Registration: RegistrationStatus] = [:]
        var unreadable: [Registration: String] = [:]
        statuses.reserveCapacity(results.count)
        for outcome in results {
            if let status = outcome.status {
                statuses[outcome.registration] = status
            } else {
                unreadable[outcome.registration] = outcome.failure ?? "unknown error"
            }
        }
        return (statuses, unreadable)
    }

    /// A struct, not a tuple: tuple-typed task-group results were miscompiled in release builds (Swift 6.3),
    /// coming back with the wrong index.
    struct ReadOutcome: Sendable {
        var registration: Registration
        var status: RegistrationStatus?
        var failure: String?
    }
}

/// Runs an async function over many inputs with at most `limit.current` in flight, keeping input order.
package enum BoundedConcurrency {
    struct Indexed<Value: Sendable>: Sendable {
        let index: Int
        let value: Value
    }

    package static func map<Input: Sendable, Output: Sendable>(
        _ inputs: [Input], limit: ConcurrencyLimit, _ transform: @escaping @Sendable (Input) async throws -> Output
    ) async throws -> [Output] {
        // Child results are a struct and the group is not captured by a nested function: both patterns
        // were miscompiled in release builds (wrong indices, then a crash).
        try await withThrowingTaskGroup(of: Indexed<Output>.self) { group in
            var results = [Output?](repeating: nil, count: inputs.count)
            var next = 0
            var inFlight = 0
            var allowed = limit.current
            while true {
                while next < inputs.count, inFlight < allowed {
                    let index = next
                    let input = inputs[index]
                    next += 1
                    inFlight += 1
                    group.addTask { Indexed(index: index, value: try await transform(input)) }
                }
                guard let done = try await group.next() else { break }
                inFlight -= 1
                allowed = limit.answered()
                results[done.index] = done.value
            }
            return results.map { $0! }
        }
    }
}
