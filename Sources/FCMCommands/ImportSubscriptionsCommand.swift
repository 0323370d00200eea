import ArgumentParser
import FCMCore
import FCMEngine
import FCMManifest
import FCMViews
import Foundation

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
        var who: [Registration]
        if let registrations {
            guard let text = try? String(contentsOfFile: registrations, encoding: .utf8) else { throw fail("cannot read \(registrations)") }
            who = text.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty && !$0.hasPrefix("#") }
                .map { Registration(inferring: $0) }
        } else {
            who = Array(loaded.desiredState().deviceNames.keys)
        }
        who = Array(Set(who)).sorted()
        if who.isEmpty { throw fail("no registrations to read: the manifest names no devices; pass --registrations FILE") }
        try await options.finish(.subscriptions(who), session: session, loaded: loaded, connection: connection)
    }
}
