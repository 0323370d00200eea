import ArgumentParser
import FCMClient
import FCMCore
import FCMEngine
import FCMViews
import Foundation

struct SendCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "send",
        abstract: "Send a test message to a token, FID, topic, condition or device group.",
        discussion: """
            Exactly one of --token, --fid, --topic, --condition, --group. With -f, --token and --fid also accept \
            device names from the manifest, and the project comes from it. --dry-run asks FCM to validate the \
            message (validate_only) and sends nothing.
            """)

    @OptionGroup var manifest: ManifestOptions
    @OptionGroup var client: ConnectionOptions

    @Option(help: "A registration token, or a device name from the manifest.") var token: String?
    @Option(help: "A Firebase Installation ID, or a device name from the manifest.") var fid: String?
    @Option(help: "A topic name.") var topic: String?
    @Option(help: "A condition such as \"'a' in topics && !('b' in topics)\" (at most 5 topics).") var condition: String?
    @Option(help: "A device group's name (notification_key_name).") var group: String?
    @Option(help: "Notification title.") var title: String?
    @Option(help: "Notification body.") var body: String?
    @Option(help: "Image URL, set for Android, APNs (with mutable-content) and web push.") var image: String?
    @Option(help: "Data payload entry KEY=VALUE. Repeatable.") var data: [String] = []
    @Option(help: "Project id, when there is no manifest (else GOOGLE_CLOUD_PROJECT or the key file).") var project: String?
    @Option(help: "Sender id (project number) for --group, when there is no manifest.") var senderId: String?
    @Flag(help: "Validate only: FCM checks the message and delivers nothing.") var dryRun = false

    func payload() -> [String: String] {
        var payload: [String: String] = [:]
        for item in data {
            let parts = item.split(separator: "=", maxSplits: 1)
            payload[String(parts[0])] = parts.count > 1 ? String(parts[1]) : ""
        }
        return payload
    }

    func validate() throws {
        let targets = [token, fid, topic, condition, group].compactMap { $0 }
        guard targets.count == 1 else { throw ValidationError("give exactly one of --token, --fid, --topic, --condition, --group") }
        for item in data where !item.contains("=") { throw ValidationError("--data takes KEY=VALUE, got '\(item)'") }
        if let image, !Self.isImageURL(image) { throw ValidationError("--image must be an http(s) URL with a host") }
    }

    /// FCM refuses an image URL that is not http(s) or has no host (send-image docs; the emulator's contract).
    static func isImageURL(_ text: String) -> Bool {
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), let host = url.host else { return false }
        return ["http", "https"].contains(scheme) && !host.isEmpty
    }

    /// What a refusal means for the person who sent the message, when FCM's own words do not say it.
    static func hint(_ code: String) -> String {
        switch code {
        case "UNREGISTERED", "NOT_FOUND": ": the registration is no longer valid (app uninstalled or token expired)"
        case "SENDER_ID_MISMATCH":
            ": the registration belongs to another Firebase project than the one these credentials send for "
                + "(check the project id and that the app was built with this project's config)"
        case "THIRD_PARTY_AUTH_ERROR", "APNS_AUTH_ERROR":
            ": FCM could not authenticate to APNs or web push for this app; check the APNs auth key or certificate, or the "
                + "web push credentials, in the Firebase console (Project settings, Cloud Messaging). fcmctl's own credentials are fine"
        default: ""
        }
    }

    func run() async throws {
        let console = Console.current
        var settings = ProjectSettings(id: project ?? "", senderId: senderId ?? "")
        var devices: [String: Registration] = [:]
        var localGroups: [String: DesiredGroup] = [:]
        var deviceNames: [Registration: String] = [:]
        if !manifest.manifests.isEmpty {
            let loaded = try RunStart.load(manifest.paths, manifest.outsidePaths)
            let desired = loaded.desiredState()
            localGroups = desired.localGroups
            deviceNames = desired.deviceNames
            if settings.id.isEmpty { settings.id = desired.project.id }
            if settings.senderId.isEmpty { settings.senderId = desired.project.senderId }
            for (registration, name) in desired.deviceNames { devices[name] = registration }
        }
        let session = RunStart.opener.open(settings: client.settings())
        let connection = try surfacingNow { try session.connect(project: settings, needsProjectID: false) }
        defer { connection.shutdown() }
        guard let service = connection.live else { throw fail("sending messages needs the FCM client; this world has none") }
        guard !service.project.id.isEmpty else {
            throw fail("no project id: pass --project, -f with a manifest, or set GOOGLE_CLOUD_PROJECT")
        }
        let message = OutgoingMessage(target: .token(""), title: title, body: body, image: image, data: payload())
        if let name = group, let local = localGroups[name] {
            let report = try await MessageFanOut(service: service, parallelism: client.parallelism, clock: session.world.clock)
                .send(message, to: local, validateOnly: dryRun)
            FanOutPresentation(console: console, redactor: Redactor(showTokens: client.showTokens), names: deviceNames).show(report)
            if report.failed > 0 { throw ExitCode(ExitCodes.partialFailure) }
            session.reportStatistics()
            return
        }
        do {
            let sent = try await surfacing {
                try await MessageSend(session: session, service: service, devices: devices).send(message, to: recipient, validateOnly: dryRun)
            }
            console.out(
                dryRun
                    ? "Validated a message to \(sent.destination.wording) (dry run: nothing was delivered): \(sent.name)"
                    : "Sent to \(sent.destination.wording): \(sent.name)")
        } catch let refused as MessageRefused {
            throw fail(
                "FCM refused the message to \(refused.destination.wording): \(refused.error.code) \(refused.error.message)\(Self.hint(refused.error.code))"
            )
        }
        session.reportStatistics()
    }

    /// The one recipient `validate` let through.
    var recipient: MessageRecipient {
        if let token { return .token(token) }
        if let fid { return .fid(fid) }
        if let topic { return .topic(topic) }
        if let condition { return .condition(condition) }
        return .fcmGroup(group ?? "")
    }
}
