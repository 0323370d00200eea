import ArgumentParser
import FCMCore
import FCMEngine
import FCMManifest
import FCMReconcile
import FCMViews
import Foundation

struct ImportSubscriptionsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "subscriptions",
        abstract: "Import the topic subscriptions of the manifest's devices (or of registrations listed in a file).")

    @OptionGroup var options: ImportOptions

    @Option(help: ArgumentHelp("Read these registrations (one per line) instead of the manifest's devices.", valueName: "file"))
    var registrations: String?

    func run() async throws {
        let (session, loaded, connection) = try await options.start()
        defer { connection.shutdown() }
        let desired = loaded.desiredState()
        let names = desired.deviceNames
        var who: [Registration]
        if let registrations {
            guard let text = try? String(contentsOfFile: registrations, encoding: .utf8) else { throw fail("cannot read \(registrations)") }
            who = text.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty && !$0.hasPrefix("#") }
                .map { Registration(inferring: $0) }
        } else {
            who = Array(names.keys)
        }
        who = Array(Set(who)).sorted()
        if who.isEmpty { throw fail("no registrations to read: the manifest names no devices; pass --registrations FILE") }
        let observed: ObservedState
        do {
            observed = try await Refresher(service: connection.service, limit: session.concurrency, executor: connection.executor)
                .refresh(groups: [], registrations: Set(who))
        } catch {
            throw fail("reading subscriptions failed: \(error); nothing was imported")
        }
        var topics: [String: [Registration]] = [:]
        for registration in who {
            if case .active(let subscribed)? = observed.registrations[registration] {
                for topic in subscribed { topics[topic, default: []].append(registration) }
            }
        }
        let unreadable = observed.unreadable.count
        if unreadable > 0 { Console.current.err("warning: \(plural(unreadable, "registration")) could not be read and were left out") }
        let day = PlatformDeprecations.dayText(session.world.now())
        var writer = ManifestWriter(header: [
            topics.isEmpty
                ? "Imported by `fcmctl import subscriptions` on \(day): no subscriptions found."
                : "Imported by `fcmctl import subscriptions` on \(day) from FCM (\(plural(who.count, "registration")) read); "
                    + "fcmctl records these subscriptions as its own."
        ])
        for topic in topics.keys.sorted() {
            let members = topics[topic]!
            writer.add(
                .init(name: topic, comment: "\(plural(members.count, "subscription")) found in FCM", members: members.map { names[$0] ?? $0.value }),
                to: .topics)
        }
        try await options.finish(writer, session: session) { ledger in
            for (topic, members) in topics {
                for registration in members { ledger.recordSubscription(registration, topic: topic) }
            }
        }
    }
}
