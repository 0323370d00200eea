import ArgumentParser
import FCMCore
import FCMEngine

struct ImportSubscriptionsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "subscriptions",
        abstract: "Import the topic subscriptions of the manifest's devices (or of registrations listed in a file).",
        discussion: """
            Writes the topics the manifests do not declare yet, with the registrations FCM shows subscribed, and records \
            exactly those subscriptions. A subscription to a topic declared already is never written (a topic is defined \
            in one file) nor recorded: a declared member's is declared already, and any other stays the app's own. \
            Import refuses, writing and recording nothing, when the next plan would remove a subscription it read \
            (an authoritative topic that does not declare it).
            """)

    @OptionGroup var options: ImportOptions

    @Option(help: ArgumentHelp("Read these registrations (one per line) instead of the manifest's devices.", valueName: "file"))
    var registrations: String?

    func run() async throws {
        let (session, loaded, connection) = try await options.start()
        defer { connection.shutdown() }
        let subject = try surfacingNow { try ImportSubject.subscriptions(listedIn: registrations, desired: loaded.desiredState()) }
        try await options.finish(subject, session: session, loaded: loaded, connection: connection)
    }
}
