import ArgumentParser
import FCMCore
import FCMEngine
import FCMManifest

struct ManifestOptions: ParsableArguments {
    @Option(
        name: [.customShort("f"), .customLong("manifest")],
        help: "A manifest file, or a directory whose *.yaml/*.yml files are merged. Repeatable. Default: the current directory.",
        completion: .file(extensions: ["yaml", "yml"]))
    var manifests: [String] = []

    @Flag(
        help: ArgumentHelp(
            "Also read manifests, includes and device files outside the repository (the directory holding .git).",
            discussion: "For a local run: in CI a pull request would otherwise choose which files of the runner a plan prints."))
    var allowOutsidePaths = false

    var paths: [String] { manifests.isEmpty ? ["."] : manifests }

    var outsidePaths: PathConfinement.Policy { allowOutsidePaths ? .anywhere : .repository }

    init() {}

    init(manifests: [String]) { self.manifests = manifests }
}

struct StateOptions: ParsableArguments {
    @Option(
        help:
            "The state file (or gs://BUCKET/PREFIX). Default: .fcmctl/state.json in the manifest's directory; required when several -f have different directories.",
        completion: .file(extensions: ["json"]))
    var state: String?
}

struct RunOptions: ParsableArguments {
    init() {}

    init(showTokens: Bool) { self.showTokens = showTokens }

    @Flag(help: "Show registrations in full instead of redacted.")
    var showTokens = false

    @Option(
        help:
            "At most this many requests in flight. fcmctl starts at 32 and doubles while that speeds it up: 512 at 50 ms latency is about 10,000 reads a second."
    )
    var parallelism = 512

    @Option(help: "Topic subscription changes per second, shared by all requests (FCM's quota is 3,000 per project).")
    var qps: Double = 2500

    @Option(help: "Send FCM API calls to this base URL, keeping authentication (also FCM_ENDPOINT).")
    var endpoint: String?

    @Option(
        help: ArgumentHelp(
            "Ask this URL for device-group members (GET URL?notification_key=KEY) before trusting the state (also FCMCTL_GROUP_EXPORT_URL).",
            discussion: "FCM documents no member list, so by default members come from the state; 400/404/405 turns the probe off."))
    var groupExportUrl: String?

    @Flag(help: "Say where credentials came from and what happened on the wire. Never prints keys or tokens.")
    var verbose = false

    @Flag(help: "Allow a manifest that declares no groups or topics (it would remove everything fcmctl manages).")
    var allowEmpty = false

    @Flag(help: "When FCM will not tell about some registrations, plan and apply the rest and exit 0 (a warning) instead of 1.")
    var skipUnreadable = false

    func validate() throws {
        guard (1...2000).contains(parallelism) else { throw ValidationError("--parallelism must be between 1 and 2000") }
        guard qps >= 0 else { throw ValidationError("--qps must not be negative (0 means unpaced)") }
        if let endpoint, !(endpoint.hasPrefix("http://") || endpoint.hasPrefix("https://")) {
            throw ValidationError("--endpoint must be an http:// or https:// URL")
        }
        if let groupExportUrl, !(groupExportUrl.hasPrefix("http://") || groupExportUrl.hasPrefix("https://")) {
            throw ValidationError("--group-export-url must be an http:// or https:// URL")
        }
    }
}

extension RunOptions {
    /// The options as the engine takes them.
    func settings(adoptExisting: Bool = false, targeting: PlanTargeting = PlanTargeting()) -> RunSettings {
        var settings = RunSettings()
        settings.showTokens = showTokens
        settings.parallelism = parallelism
        settings.qps = qps
        settings.endpoint = endpoint
        settings.groupExportURL = groupExportUrl
        settings.verbose = verbose
        settings.allowEmpty = allowEmpty
        settings.skipUnreadable = skipUnreadable
        settings.adoptExisting = adoptExisting
        settings.targeting = targeting
        return settings
    }
}
