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
        let changes = plan.topics.flatMap(\.subscriptionChanges)
        let outcomes = (try? await BoundedConcurrency.map(changes, limit: parallelism) { change in
            await self.applySubscription(change, journal: journal)
        }) ?? []
        for (change, outcome) in zip(changes, outcomes) {
            let address = "topic/\(change.topic)"
            switch outcome {
            case .success(.done):
                report.requestsSucceeded += 1
                report.completed[address, default: 0] += 1
            case .success(.registrationGone(let reason)):
                report.requestsSucceeded += 1
                report.gone.append(ApplyFailure(address: address, message: "\(Redactor(showTokens: false)(change.registration)) is no longer registered (\(reason)): remove it from the manifest"))
            case .failure(let error):
                report.failures.append(ApplyFailure(address: address, message: "\(change.action.rawValue) \(Redactor(showTokens: false)(change.registration)): \(error)"))
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
                let snapshot = members
                try await journal.record({ $0.recordGroup(change.name, members: snapshot) }, flushNow: true)
                report.requestsSucceeded += 1
                report.completed[change.address, default: 0] += 1
            } catch {
                // Later steps assumed this one happened; stop this group and let the next plan recompute.
                report.failures.append(ApplyFailure(address: change.address, message: "\(error)"))
                return
            }
        }
    }

    func applySubscription(_ change: SubscriptionChange, journal: LedgerJournal) async -> Result<SubscriptionOutcome, any Error> {
        do {
            let outcome = try await service.perform(change)
            switch (change.action, outcome) {
            case (.subscribe, .done):
                try await journal.record { $0.recordSubscription(change.registration, topic: change.topic) }
            case (.unsubscribe, _), (.subscribe, .registrationGone):
                try await journal.record { $0.forgetSubscription(change.registration, topic: change.topic) }
            }
            return .success(outcome)
        } catch {
            return .failure(error)
        }
    }
}
