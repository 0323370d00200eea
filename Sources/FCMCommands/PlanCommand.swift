import ArgumentParser
import FCMClient
import FCMCore
import FCMState

struct PlanCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "plan", abstract: "Show what apply would change. Sends no mutating request.")

    @OptionGroup var manifest: ManifestOptions
    @OptionGroup var state: StateOptions
    @OptionGroup var run: RunOptions
    @OptionGroup var locking: LockOptions

    @Flag(help: "Exit 0 when there are no changes, 2 when there are.")
    var detailedExitcode = false

    func run() async throws {
        let pipeline = Pipeline(manifest: manifest, state: state, options: run)
        let connection = try pipeline.start()
        defer { connection.shutdown() }
        let service = connection.service
        let store = pipeline.openStore()
        let computed = try await pipeline.withStateLock(store, operation: "plan", options: locking) { _ in
            try await pipeline.compute(service: service, store: store)
        }
        for line in PlanTextRenderer(redactor: Redactor(showTokens: run.showTokens), deviceNames: computed.desired.deviceNames).render(computed.plan) {
            Console.current.out(line)
        }
        pipeline.reportStatistics()
        if detailedExitcode && computed.plan.hasChanges { throw ExitCode(ExitCodes.changesPresent) }
    }
}
