import ArgumentParser
import FCMCore
import FCMEngine
import FCMViews

/// `fcmctl drift`: refresh only. Reads FCM and the state, reports where they and the manifests disagree,
/// and changes nothing: no request that mutates FCM, no write of the state, no lock taken.
struct DriftCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "drift", abstract: "Report what changed in FCM outside fcmctl, and what to do about it. Changes nothing.")

    @OptionGroup var manifest: ManifestOptions
    @OptionGroup var state: StateOptions
    @OptionGroup var run: RunOptions
    @OptionGroup var output: OutputOptions
    @OptionGroup var progressOptions: ProgressOptions

    @Flag(help: "Exit 0 when there is no drift, 2 when there is.")
    var detailedExitcode = false

    func run() async throws {
        try await ErrorDocument.guarding("drift", output: output, showTokens: run.showTokens) {
            try await progressOptions.running("drift", format: output.format) { try await drift(progress: $0) }
        }
    }

    func drift(progress: RunProgress) async throws {
        let (session, target) = try RunStart.open(
            manifest: manifest, state: state, settings: run.settings(), format: output.format, progress: progress)
        let connection = try RunStart.connect(session, target)
        defer { connection.shutdown() }
        let computed = try await surfacing {
            try await session.computePlan(target.desired, service: connection.service, store: session.openStore(), includeLocalGroups: true)
        }
        RunRecord.current?.project = computed.desired.project.id
        Console.current.err(StateReadLine.text(store: session.openStore(), version: computed.snapshot.version))
        let report = DriftAnalyzer.analyze(desired: computed.desired, ledger: computed.snapshot.ledger, observed: computed.observed)
        var view = DriftView(
            report: report, labeler: RegistrationLabeler(redactor: Redactor(showTokens: run.showTokens), deviceNames: computed.desired.deviceNames),
            maxMembers: output.maxMembers, notices: computed.deprecations, project: computed.desired.project.id)
        view.unreadable = computed.observed.unreadable.count
        let palette = output.palette(console: Console.current)
        try Presenter(options: output, command: "drift", secret: run.showTokens).show(
            Presentation(
                text: { view.text(palette: palette) }, json: { view.json() }, markdown: { view.markdown(maxChars: $0) },
                annotations: view.annotations(desired: computed.desired)))
        session.reportStatistics()
        let unreadable = session.reportUnreadable(computed.observed)
        if unreadable != ExitCodes.success { throw ExitCode(unreadable) }
        if detailedExitcode && report.hasDrift { throw ExitCode(ExitCodes.changesPresent) }
    }
}
