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

    package var succeeded: Bool { failures.isEmpty }
}

/// Carries out a plan: group steps in order (each group's size stays within 1...20), topic changes
/// with bounded concurrency, every completed operation journaled into the ledger.
package struct Applier: Sendable {
    package let service: any FCMService
    package let parallelism: Int

    package init(service: any FCMService, parallelism: Int = 64) {
        self.service = service
        self.parallelism = max(1, parallelism)
    }

    package func apply(_ plan: Plan, observed: ObservedState, journal: LedgerJournal) async -> ApplyReport {
        var report = ApplyReport()
        for change in plan.groups {
            await applyGroup(change, observed: observed.groups[change.name], journal: journal, report: &report)
        }
        let batches = Self.batches(plan.topics, size: service.topicBatchSize)
        let outcomes = (try? await BoundedConcurrency.map(batches, limit: parallelism) { batch in
            await self.applyBatch(batch, journal: journal)
        }) ?? []
        for (batch, results) in zip(batches, outcomes) {
            let address = "topic/\(batch.topic)"
            for (registration, outcome) in zip(batch.registrations, results) {
                var who: String { Redactor(showTokens: false)(registration) }
                switch outcome {
                case .success(.done):
                    report.requestsSucceeded += 1
                    report.completed[address, default: 0] += 1
                case .success(.registrationGone(let reason)):
                    report.requestsSucceeded += 1
                    report.gone.append(ApplyFailure(address: address, message: "\(who) is no longer registered (\(reason)): remove it from the manifest"))
                case .success(.failed(let code)):
                    report.failures.append(ApplyFailure(address: address, message: "\(batch.action.rawValue) \(who): \(code)"))
                case .failure(let error):
                    report.failures.append(ApplyFailure(address: address, message: "\(batch.action.rawValue) \(who): \(error)"))
                }
            }
        }
        do {
            try await journal.flush()
        } catch {
            report.failures.append(ApplyFailure(address: "state", message: "\(error)"))
        }
        return report
    }

    func applyGroup(_ change: GroupChange, observed: ObservedGroup?, journal: LedgerJournal, report: inout ApplyReport) async {
        var key = observed?.notificationKey
        var members = observed?.members ?? []
        for step in change.steps {
            do {
                key = try await service.performGroupStep(step, name: change.name, key: key)
                switch step {
                case .create(let added), .add(let added): members.formUnion(added)
                case .remove(let removed): members.subtract(removed)
                }
                try await journal.record(.group(name: change.name, members: members.sorted().map(LedgerRegistration.init)))
                report.requestsSucceeded += 1
                report.completed[change.address, default: 0] += 1
            } catch {
                // Later steps assumed this one happened; stop this group and let the next plan recompute.
                report.failures.append(ApplyFailure(address: change.address, message: "\(error)"))
                return
            }
        }
    }

    /// Registrations of one topic and one action, sent in one request where the API allows.
    package struct SubscriptionBatch: Sendable, Hashable {
        package var topic: String
        package var action: SubscriptionChange.Action
        package var registrations: [Registration]
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

    func applyBatch(_ batch: SubscriptionBatch, journal: LedgerJournal) async -> [Result<SubscriptionOutcome, any Error>] {
        let outcomes: [Registration: SubscriptionOutcome]
        do {
            outcomes = try await service.performBatch(topic: batch.topic, action: batch.action, batch.registrations)
        } catch {
            return batch.registrations.map { _ in .failure(error) }
        }
        var results: [Result<SubscriptionOutcome, any Error>] = []
        for registration in batch.registrations {
            let outcome = outcomes[registration] ?? .failed(code: "NO_RESULT")
            do {
                switch (batch.action, outcome) {
                case (.subscribe, .done):
                    try await journal.record(.subscribed(topic: batch.topic, registration: LedgerRegistration(registration)))
                case (.unsubscribe, .done), (_, .registrationGone):
                    try await journal.record(.unsubscribed(topic: batch.topic, registration: LedgerRegistration(registration)))
                case (_, .failed):
                    break
                }
                results.append(.success(outcome))
            } catch {
                results.append(.failure(error))
            }
        }
        return results
    }
}
