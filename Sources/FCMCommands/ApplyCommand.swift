import ArgumentParser
import FCMClient
import FCMState
import Foundation
import FCMCore
import FCMReconcile

struct ApplyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "apply", abstract: "Make FCM match the manifests. Safe to re-run.")

    @OptionGroup var manifest: ManifestOptions
    @OptionGroup var state: StateOptions
    @OptionGroup var run: RunOptions

    @Flag(help: "Do not ask for confirmation.")
    var autoApprove = false

    @Flag(help: "Print the exact requests apply would send, and send none of them.")
    var dryRun = false

    func run() async throws {
        let console = Console.current
        let redactor = Redactor(showTokens: run.showTokens)
        let pipeline = Pipeline(manifest: manifest, state: state, options: run)
        let (service, transport) = try pipeline.start()
        defer { transport.shutdown() }
        let computed = try await pipeline.compute(service: service)
        for line in PlanTextRenderer(redactor: redactor, deviceNames: computed.desired.deviceNames).render(computed.plan) { console.out(line) }

        if dryRun {
            printRequests(computed, service: service, redactor: redactor)
            return
        }
        let journal = LedgerJournal(
            ledger: computed.ledger.aligned(with: computed.observed, desired: computed.desired), backend: computed.backend,
            saved: computed.savedLedger)
        if !computed.plan.hasChanges {
            try await save(journal)
            return
        }
        try confirm()
        let started = ContinuousClock.now
        let report = await Applier(service: service, parallelism: run.parallelism)
            .apply(computed.plan, observed: computed.observed, journal: journal)
        if run.verbose {
            let seconds = Pipeline.seconds(since: started)
            let changes = computed.plan.summary.subscriptionsToAdd + computed.plan.summary.subscriptionsToRemove
            console.err(String(format: "Applied %d subscription changes in %.2f s (%.0f changes/s).", changes, seconds, Double(changes) / max(seconds, 0.001)))
        }
        let desired = computed.desired
        try? await journal.record({ $0.recordProtection(from: desired) }, flushNow: true)
        console.out("")
        for (address, count) in report.completed.sorted(by: { $0.key < $1.key }) {
            console.out("\(address): \(count) request\(count == 1 ? "" : "s") done")
        }
        for gone in report.gone { console.err("warning: \(gone.address): \(gone.message)") }
        for failure in report.failures { console.err("error: \(failure.address): \(failure.message)") }
        let serial = await journal.ledger.serial
        console.out(
            "Apply \(report.succeeded ? "complete" : "finished with failures"): \(report.requestsSucceeded) requests "
                + "succeeded, \(report.failures.count) failed. State: \(computed.backend.displayName) (serial \(serial)).")
        pipeline.reportStatistics()
        if !report.succeeded {
            console.err("Some operations failed; what succeeded is recorded, and re-running apply is safe.")
            throw ExitCode(ExitCodes.partialFailure)
        }
    }

    func save(_ journal: LedgerJournal) async throws {
        do {
            try await journal.flush()
        } catch {
            throw fail("\(error)")
        }
    }

    func confirm() throws {
        let console = Console.current
        if autoApprove { return }
        guard console.isInteractive else {
            throw fail("apply needs confirmation: standard input is not a terminal, so pass --auto-approve")
        }
        console.writeOut("\nApply these changes? Only 'yes' is accepted: ")
        guard console.readLine()?.trimmingCharacters(in: .whitespaces) == "yes" else {
            throw fail("apply cancelled; nothing was changed")
        }
    }

    func printRequests(_ computed: Pipeline.Computed, service: any FCMService, redactor: Redactor) {
        let console = Console.current
        guard computed.plan.hasChanges else { return }
        console.out("")
        console.out("Dry run: apply would send these requests, in this order (nothing was sent):")
        for change in computed.plan.groups {
            let key = computed.observed.groups[change.name].map { redactor.redact($0.notificationKey) }
            for step in change.steps {
                for request in service.preview(step, name: change.name, key: key, redactor: redactor) { console.out("  \(request.line)") }
            }
        }
        for batch in Applier.batches(computed.plan.topics, size: service.topicBatchSize) {
            for request in service.previewBatch(topic: batch.topic, action: batch.action, batch.registrations, redactor: redactor) {
                console.out("  \(request.line)")
            }
        }
    }
}
