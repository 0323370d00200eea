import FCMClient
import FCMCore
import FCMManifest
import FCMReconcile
import FCMState
import Foundation

/// The stages every command shares: load and validate, connect, read state, refresh, plan.
struct LoadedManifest {
    var manifest: Manifest
    var resolution: Resolution

    /// Built on demand: at fleet scale it hashes every subscription, which `validate` does not need.
    func desiredState() -> DesiredState { manifest.desiredState(resolution) }
}

/// Holds the state path as it becomes known: `--state` wins, then the manifest's `state.path`, then the default.
final class Pipeline {
    let manifestPaths: [String]
    let options: RunOptions
    let format: OutputFormat
    private var statePath: String?
    private let defaultStatePath: String
    private var desired: DesiredState?

    var console: Console { Console.current }

    init(manifest: ManifestOptions, state: StateOptions, options: RunOptions, format: OutputFormat = .text) {
        manifestPaths = manifest.paths
        statePath = state.state
        defaultStatePath = state.statePath(manifests: manifest.paths)
        self.options = options
        self.format = format
    }

    var resolvedStatePath: String { statePath ?? defaultStatePath }

    /// Prints every diagnostic in the chosen format; fails with exit 1 if any is an error, before anything is sent.
    static func load(_ paths: [String], format: OutputFormat = .text) throws -> LoadedManifest {
        let result = ManifestLoader().load(paths: paths)
        DiagnosticPrinter(sources: result.sources, format: format).print(result.diagnostics)
        guard let manifest = result.manifest, let resolution = result.resolution else {
            let errors = result.diagnostics.filter { $0.severity == .error }.count
            throw fail("the manifest has \(errors) error\(errors == 1 ? "" : "s"); nothing was sent to FCM")
        }
        return LoadedManifest(manifest: manifest, resolution: resolution)
    }

    func loadDesired() throws -> DesiredState {
        let loaded = try Self.load(manifestPaths, format: format)
        let desired = loaded.desiredState()
        if desired.isEmpty && !options.allowEmpty {
            throw fail("the manifest declares no groups and no topics; fcmctl would remove everything it manages. "
                + "Pass --allow-empty if that is what you want")
        }
        if desired.project.topicAPI == .iid && !desired.topics.isEmpty {
            throw fail("project.topicApi: iid (the legacy Instance ID batch API) is not supported by this fcmctl yet; "
                + "use topicApi: v1, or validate only")
        }
        if let path = loaded.manifest.state?.path {
            statePath = statePath ?? Self.resolve(path.value, relativeTo: path.location.file)
        }
        return desired
    }

    static func resolve(_ path: String, relativeTo file: String) -> String {
        if path.hasPrefix("/") { return path }
        let directory = (file as NSString).deletingLastPathComponent
        return ((directory.isEmpty ? "." : directory) as NSString).appendingPathComponent(path)
    }

    /// Only the emulator can be reached in this version: credentials for the real service come with the
    /// client issue, and until then fcmctl refuses rather than sending unauthenticated requests to Google.
    func connect(project: ProjectSettings) throws -> (FCMHTTPService, CurlTransport) {
        guard let host = console.environment["FCM_EMULATOR_HOST"], !host.isEmpty else {
            throw fail("fcmctl cannot authenticate to FCM yet: credentials (service accounts, ADC) are not supported "
                + "in this version. Set FCM_EMULATOR_HOST=127.0.0.1:PORT to use fcm-emulator")
        }
        let transport = CurlTransport()
        // "owner" is the emulator's always-valid token, as with the Firebase emulators.
        let service = FCMHTTPService(transport: transport, endpoints: .emulator(hostAndPort: host), project: project) { "owner" }
        return (service, transport)
    }

    /// Loads the manifests and connects: the common start of every command that talks to FCM.
    func start() throws -> (FCMHTTPService, CurlTransport) {
        let desired = try loadDesired()
        self.desired = desired
        return try connect(project: desired.project)
    }

    func readLedger() throws -> (LocalStateBackend, Ledger?) {
        let backend = LocalStateBackend(path: resolvedStatePath)
        do {
            return (backend, try backend.read())
        } catch {
            throw fail("\(error)")
        }
    }

    struct Computed {
        var desired: DesiredState
        var ledger: Ledger
        var savedLedger: Ledger?
        var backend: LocalStateBackend
        var observed: ObservedState
        var plan: Plan
    }

    func compute(service: any FCMService) async throws -> Computed {
        let desired = try self.desired ?? loadDesired()
        let (backend, saved) = try readLedger()
        let ledger = saved ?? Ledger()
        let refresher = Refresher(service: service, parallelism: options.parallelism)
        let groups = Set(desired.groups.keys).union(ledger.groups.keys).count
        console.err("Refreshing \(groups) group\(groups == 1 ? "" : "s") and the subscriptions of known registrations…")
        let observed: ObservedState
        do {
            observed = try await refresher.refresh(desired: desired, ledger: ledger)
        } catch {
            throw fail("refreshing the live state failed: \(error). Nothing was changed")
        }
        let plan = Planner.plan(desired: desired, ledger: ledger, observed: observed)
        return Computed(desired: desired, ledger: ledger, savedLedger: saved, backend: backend, observed: observed, plan: plan)
    }
}
