import FCMClient
import FCMCore
import FCMEngine
import FCMViews
import Foundation

enum LiveConnection {
    /// Credentials in Application Default Credentials order, the FCM base URL, and one rate limiter for
    /// the project shared by every request.
    static func make(project: ProjectSettings, options: ConnectOptions, clock runClock: any RunClock) throws -> Connection {
        let environment = options.environment
        let source: CredentialSource
        do {
            source = try CredentialResolver.resolve(environment: environment)
        } catch {
            throw ConnectError(description: "\(error)")
        }
        // As many connections as requests in flight, or as the open-file limit leaves room for.
        let transport: CurlTransport
        do {
            let connections = try DescriptorBudget.connections(wanted: options.parallelism)
            var curl = CurlTransport.Options(maximumConnectionsPerHost: connections, loop: CurlTransport.Loop(environment: environment))
            curl.maximumTotalConnections = connections
            transport = try CurlTransport(options: curl)
        } catch {
            throw ConnectError(description: "\(error)")
        }
        let credentials: any AccessTokenProvider
        do {
            credentials = try TokenProviderFactory.make(source, environment: environment, transport: transport, clock: runClock)
        } catch {
            transport.shutdown()
            throw ConnectError(description: "\(error)")
        }
        var endpoints = FCMEndpoints.production
        if case .emulator(let host) = source { endpoints = .emulator(hostAndPort: host) }
        if let base = options.endpoint ?? environment["FCM_ENDPOINT"], !base.isEmpty {
            let trimmed = base.hasSuffix("/") ? String(base.dropLast()) : base
            endpoints = FCMEndpoints(fcmBase: trimmed, iidBase: trimmed, usesEmulator: false)
        }
        if let export = options.groupExportURL ?? environment["FCMCTL_GROUP_EXPORT_URL"], !export.isEmpty {
            guard export.hasPrefix("http://") || export.hasPrefix("https://") else {
                transport.shutdown()
                throw ConnectError(description: "FCMCTL_GROUP_EXPORT_URL must be an http:// or https:// URL, not '\(export)'")
            }
            endpoints.groupExportURL = export
        }
        var project = project
        project.id = ProjectID.resolve(declared: project.id, environment: environment)
        if project.id.isEmpty, case .serviceAccount(let path) = source { project.id = ProjectID.keyFileProject(path) ?? "" }
        if project.id.isEmpty && options.needsProjectID {
            transport.shutdown()
            throw ConnectError(
                description: "no project id: set project.id in the manifest or GOOGLE_CLOUD_PROJECT, or use a service-account key that names one")
        }
        if options.verbose {
            Console.current.err(
                "Credentials: \(source.summary). FCM API: \(endpoints.fcmBase). Project: \(project.id). HTTP: libcurl, \(transport.loop) loop.")
        }
        let statistics = SendStatistics()
        // On the system clock, paced requests and retries sleep on the transport's own loop and wake there (a
        // timer per sleeper costs more CPU than a paced run's work); any other clock is the run's own.
        let clock: any RunClock = runClock is SystemClock ? TransportPacingClock(transport: transport) : runClock
        let limiter = RateLimiter(perSecond: options.qps, clock: clock, executor: transport)
        let sender = RequestSender(
            transport: transport, credentials: credentials, limiter: limiter, clock: clock, statistics: statistics, fence: options.fence,
            stop: options.stop)
        // Requests waiting for a slot or a retry leave at once, see the stop and give up: a stopping run
        // waits only for what is on the wire.
        options.stop?.onRequest {
            limiter.releaseAll()
            transport.wakeAllSleepers()
        }
        var service = FCMHTTPService(sender: sender, endpoints: endpoints, project: project)
        service.caller = caller(source)
        return Connection(
            service: service, live: service, shutdown: { transport.shutdown() },
            statistics: {
                var counts = statistics.snapshot
                if limiter.configuredRate > 0 {
                    counts["pace_lowest_per_s"] = Int(limiter.lowestRate.rounded())
                    counts["pace_last_per_s"] = Int(limiter.rate.rounded())
                }
                return counts
            }, executor: transport)
    }

    /// The account the credentials act as, and its project, where the credentials file says: a service
    /// account's key, or the account an impersonating file names (`…/serviceAccounts/EMAIL:generateAccessToken`).
    /// A service account's email ends in `@PROJECT.iam.gserviceaccount.com`.
    static func caller(_ source: CredentialSource) -> (account: String?, project: String?) {
        if case .serviceAccount(let path) = source, let key = try? ServiceAccountKey(path: path) {
            return (key.clientEmail, key.projectID)
        }
        guard let path = source.path, let object = try? CredentialFile.read(path),
            let url = object["service_account_impersonation_url"] as? String, let start = url.range(of: "serviceAccounts/")
        else { return (nil, nil) }
        let email = String(url[start.upperBound...].prefix { $0 != ":" && $0 != "/" && $0 != "?" })
        guard email.contains("@") else { return (nil, nil) }
        let domain = email.split(separator: "@").last.map(String.init) ?? ""
        let suffix = ".iam.gserviceaccount.com"
        return (email, domain.hasSuffix(suffix) ? String(domain.dropLast(suffix.count)) : nil)
    }

}
