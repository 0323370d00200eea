import ArgumentParser
import FCMBuildInfo
import Foundation
import Hummingbird
import Logging

/// `fcm-emulator`: a local stand-in for the FCM server APIs.
package struct EmulatorCommand: AsyncParsableCommand {
    package static let configuration = CommandConfiguration(
        commandName: "fcm-emulator",
        abstract: "A local stand-in for the Firebase Cloud Messaging server APIs.",
        discussion: """
            Serves the device-group API (/fcm/notification), the v1 Topic Subscription API \
            (/v1/projects/P/registrations/R/topicSubscriptions), the legacy Instance ID API (/iid/…), \
            messages:send, an OAuth token endpoint (/token), a metadata-server token endpoint \
            (/computeMetadata/v1/…), the security token service's exchange (POST /v1/token) and IAM \
            Credentials' generateAccessToken (POST /v1/projects/-/serviceAccounts/EMAIL:generateAccessToken). Every FCM endpoint needs 'Authorization: Bearer TOKEN': a token from \
            /token or the metadata server, one given with --accept-token, or 'owner' (what fcmctl sends \
            with FCM_EMULATOR_HOST). A token's principal needs the IAM permission of the endpoint on the project \
            the request addresses: by default it holds roles/firebasecloudmessaging.admin on its own project and \
            nothing elsewhere (--iam, --iam-policy, --iam-default; 'owner' and --no-auth may do anything). The admin API under /emulator/v1/ needs none (its changes need 'Content-Type: application/json' and no foreign Origin): GET state, POST reset, \
            POST registrations, DELETE registrations/ID, GET registrations/ID/inbox, GET requests, GET stats, \
            GET|PUT faults, GET|PUT quotas, POST tokens:expire, GET health, GET export, POST import, GET principals, and the paged \
            GET registrations, topics, topics/NAME/subscribers and groups. A browser pointed at http://HOST:PORT/ \
            gets the inspector, a page over that API that can also register devices, subscribe them, edit device groups \
            and send messages (through the FCM APIs above, as the token 'owner' unless told another).
            The first line on standard output is 'fcm-emulator listening on http://HOST:PORT'. See docs/emulator.md.
            """,
        version: BuildInfo.summary("fcm-emulator"))

    @Option(help: "Address to bind. Loopback by default.")
    var host = "127.0.0.1"

    @Option(
        name: .customLong("allowed-host"),
        help: ArgumentHelp(
            "Also answer requests addressed to NAME (Host header), e.g. a container's service name. Repeatable; '*' for any.",
            discussion:
                "Requests must be addressed to localhost, 127.0.0.1, [::1], the --host address (any IP address when bound to 0.0.0.0) or such a name: "
                + "a web page reaching the emulator under a name of its own (DNS rebinding) is refused.",
            valueName: "NAME"))
    var allowedHost: [String] = []

    /// 9595: no Firebase emulator's default (firebase-tools' DEFAULT_PORTS: 4000, 4400, 4500, 5000, 5001, 5002,
    /// 8080, 8085, 9000, 9099, 9150, 9199, 9299, 9399, 9499), outside the 9x99 run Firebase extends, and not a
    /// Google Cloud emulator's (Datastore 8081, Bigtable 8086, Spanner 9010/9020). docs/emulator.md says why.
    package static let defaultPort = 9595

    @Option(help: "Port to bind; 0 picks a free one (read it from the first output line).")
    var port = EmulatorCommand.defaultPort

    @Flag(
        help: ArgumentHelp(
            "Treat every well-formed registration as registered, owned by the project of its first use (demos).",
            discussion: "By default, as in FCM, only registrations made known through POST /emulator/v1/registrations exist."))
    var autoRegister = false

    @Flag(help: .hidden)
    var strictRegistrations = false

    @Flag(help: "Serve GET /fcm/notification/export?notification_key=K, a member export no public source confirms.")
    var groupExport = false

    @Flag(
        inversion: .prefixedNo,
        help: ArgumentHelp(
            "Accept FIDs on the device-group and Instance ID APIs (a guess: no public source says FCM does or does not).",
            discussion:
                "With --no-accept-legacy-fids a FID there is answered as FCM answers a string that is not a registration token: INVALID_ARGUMENT in an IID batch, 400 InvalidToken from iid/info and rel/topics, dropped from a device-group request."
        ))
    var acceptLegacyFids = true

    @Flag(help: "Answer the v1 Topic Subscription API with snake_case fields (topic_name) instead of lowerCamelCase (topicName).")
    var snakeCaseFields = false

    /// lowerCamelCase became the default; the old flag is still accepted so existing scripts keep working.
    @Flag(help: .hidden)
    var camelCaseFields = false

    @Flag(help: "Accept FCM requests without credentials (quick demos).")
    var noAuth = false

    @Flag(help: "Answer missing or bad credentials with Google's HTML 401 page instead of JSON.")
    var htmlUnauthorized = false

    @Option(help: "Generate a key pair, trust it, and write a service-account JSON (token_uri = this emulator) to FILE.")
    var serviceAccountOut: String?

    @Option(help: "Trust the key of this service-account JSON for the JWT-bearer grant. Repeatable.")
    var trustServiceAccount: [String] = []

    @Option(
        help: ArgumentHelp(
            "Accept this access token on FCM endpoints: TOKEN, or TOKEN=PRINCIPAL. Repeatable.",
            discussion:
                "TOKEN alone stands for the emulator's service account (fcmctl-test@PROJECT_ID.iam.gserviceaccount.com); TOKEN=sa@p.iam.gserviceaccount.com for that one."
        ))
    var acceptToken: [String] = []

    @Option(
        help: ArgumentHelp(
            "Grant ROLE on PROJECT to PRINCIPAL, e.g. sa@p.iam.gserviceaccount.com=roles/firebasecloudmessaging.viewer@p. Repeatable.",
            discussion: "A grant on a principal's own project replaces the admin role it holds there by default.",
            valueName: "PRINCIPAL=ROLE@PROJECT"))
    var iam: [String] = []

    @Option(help: ArgumentHelp("Read IAM bindings, project numbers and custom roles from a JSON file (docs/emulator.md).", valueName: "FILE"))
    var iamPolicy: String?

    @Option(
        help: ArgumentHelp(
            "What a principal holds where no binding names it: own-project (admin on its own project, the default), none, or any-project.",
            discussion: "any-project is the emulator before it modelled IAM: admin everywhere, and a sender id no project claims is every project's.",
            valueName: "MODE"))
    var iamDefault: String?

    @Option(help: "Accept this refresh token for the refresh_token grant (authorized_user credentials). Repeatable.")
    var acceptRefreshToken: [String] = []

    @Option(
        help: "Accept this subject token at the security token service (POST /v1/token), as a workload identity pool trusts an issuer. Repeatable.")
    var acceptSubjectToken: [String] = []

    @Option(
        help: ArgumentHelp(
            "Serve GET /emulator/v1/oidc-token to callers with 'Authorization: Bearer TOKEN': a stand-in for a CI runner's identity-token endpoint.",
            discussion: "It answers {\"value\": S} with the first --accept-subject-token, as GitHub's ACTIONS_ID_TOKEN_REQUEST_URL does."))
    var oidcRequestToken: String?

    @Option(help: "Lifetime of the access tokens the emulator issues, e.g. 5s or 10m (at most 1h), to test token refresh.")
    var tokenLifetime = "1h"

    @Option(
        help: ArgumentHelp(
            "An access scope of the metadata server's instance, carried by every token it issues. Repeatable; default cloud-platform.",
            discussion: "Give e.g. https://www.googleapis.com/auth/devstorage.read_only to play a VM whose scopes do not cover FCM."))
    var metadataScope: [String] = []

    @Option(help: "Project id reported by the metadata server and written into --service-account-out.")
    var projectId = "emulator-project"

    @Option(help: "Project number reported as authorizedEntity by iid/info.")
    var senderId = "123456789012"

    @Option(help: "Topic subscription changes per second per project; 0 for unlimited.")
    var subscriptionQps: Double = 3000

    @Option(help: "Messages per minute per project; 0 for unlimited.")
    var messagesPerMinute: Double = 600_000

    @Option(help: "Send Retry-After: SECONDS with quota refusals and injected 429/503.")
    var retryAfter: Int?

    @Option(help: "Fixed latency added to every FCM request, e.g. 50ms.")
    var latency = "0ms"

    @Option(help: "Random extra latency up to this much, e.g. 10ms.")
    var jitter = "0ms"

    @Option(help: "Error rates, e.g. 503=0.05,429=0.02, topics.create:500=0.1 or messages.send:SENDER_ID_MISMATCH=1 (an FcmError code).")
    var errorRate: String?

    @Option(
        help:
            "Per-token errors within IID batches' 200 answers, e.g. RESOURCE_EXHAUSTED=0.05 or iid.batchRemove:INTERNAL=0.01 (a share of the tokens)."
    )
    var iidTokenErrorRate: String?

    @Option(help: "Fraction of FCM requests whose connection is dropped mid-response.")
    var dropRate: Double = 0

    @Option(help: "Make the change, then drop the reply: 0.3 for every mutating endpoint, or groups.mutate=0.3,topics.create=0.1.")
    var dropAfterCommitRate: String?

    @Option(
        help: "Requests touching this registration fail: ID, ID=STATUS (default 500) or ID=FCM_ERROR_CODE, e.g. ID=SENDER_ID_MISMATCH. Repeatable.")
    var failRegistration: [String] = []

    @Flag(help: "Injected errors come as HTML pages instead of JSON.")
    var htmlErrors = false

    @Option(help: "Seed for fault injection, so runs repeat.")
    var seed: UInt64 = 1

    @Option(help: "Also write the request log to FILE as JSON lines.")
    var requestLog: String?

    @Option(help: "Keep at most this many requests in the in-memory log (GET /emulator/v1/requests).")
    var requestLogLimit = 1_000_000

    @Option(help: "Persist state in FILE: loaded at start, saved while it changes and at shutdown.")
    var stateFile: String?

    @Option(
        name: .customLong("import"),
        help: ArgumentHelp(
            "Start with the state exported to DIR (DIR/fcm-emulator-export.json).",
            discussion: "Written by --export-on-exit or GET /emulator/v1/export; older versions of the format are read or refused with the reason.",
            valueName: "DIR"))
    var importDirectory: String?

    @Option(help: ArgumentHelp("Export the state to DIR/fcm-emulator-export.json when stopped by SIGTERM or SIGINT.", valueName: "DIR"))
    var exportOnExit: String?

    @Option(help: "Log level on standard error: trace, debug, info, notice, warning, error, critical.")
    var logLevel = "warning"

    package init() {}

    /// `5s`, `10m`, `1h` or plain seconds.
    static func lifetimeSeconds(_ text: String) -> Double? {
        for (suffix, factor) in [("s", 1.0), ("m", 60.0), ("h", 3600.0)] where text.hasSuffix(suffix) {
            return Double(text.dropLast()).map { $0 * factor }
        }
        return Double(text)
    }

    /// The configuration `fcm-emulator ARGUMENTS` runs with.
    package static func configuration(_ arguments: [String]) throws -> EmulatorConfiguration {
        try parse(arguments).makeConfiguration()
    }

    func makeConfiguration() throws -> EmulatorConfiguration {
        var configuration = EmulatorConfiguration()
        configuration.host = host
        configuration.port = port
        configuration.allowedHosts = allowedHost
        if autoRegister && strictRegistrations { throw ValidationError("--auto-register and --strict-registrations contradict each other") }
        configuration.autoRegister = autoRegister
        configuration.groupExport = groupExport
        configuration.acceptLegacyFIDs = acceptLegacyFids
        configuration.snakeCaseFields = snakeCaseFields
        configuration.noAuth = noAuth
        configuration.htmlUnauthorized = htmlUnauthorized
        configuration.serviceAccountOut = serviceAccountOut
        configuration.trustedServiceAccounts = trustServiceAccount
        configuration.acceptedTokens = acceptToken
        configuration.acceptedRefreshTokens = acceptRefreshToken
        configuration.acceptedSubjectTokens = acceptSubjectToken
        configuration.oidcRequestToken = oidcRequestToken
        configuration.tokenLifetime = Self.lifetimeSeconds(tokenLifetime) ?? TokenAuthority.maximumLifetime
        if !metadataScope.isEmpty { configuration.metadataScopes = metadataScope }
        configuration.projectID = projectId
        configuration.senderID = senderId
        configuration.quotas = QuotaSettings(subscriptionQPS: subscriptionQps, messagesPerMinute: messagesPerMinute, retryAfterSeconds: retryAfter)
        configuration.faults.latencyMs = try FaultSettings.parseMilliseconds(latency)
        configuration.faults.jitterMs = try FaultSettings.parseMilliseconds(jitter)
        configuration.faults.errorRates = try errorRate.map(FaultSettings.parseErrorRates) ?? []
        configuration.faults.dropRate = dropRate
        configuration.faults.iidTokenErrors = try iidTokenErrorRate.map(IIDTokenErrorRate.parse) ?? []
        configuration.faults.dropAfterCommit = try dropAfterCommitRate.map(FaultSettings.parseDropAfterCommit) ?? []
        configuration.faults.htmlErrors = htmlErrors
        configuration.faults.retryAfterSeconds = retryAfter
        for item in failRegistration {
            let parts = item.split(separator: "=", maxSplits: 1)
            guard let id = parts.first, let fault = parts.count == 1 ? InjectedFault(status: 500) : InjectedFault(parts[1]) else {
                throw ValidationError(
                    "--fail-registration takes ID, ID=STATUS or ID=FCM_ERROR_CODE (\(FcmErrorCodes.known)), got '\(item)'")
            }
            configuration.faults.failingRegistrations[String(id)] = fault
        }
        var policy = IAMPolicy()
        if let iamPolicy { try policy.read(file: iamPolicy) }
        for grant in iam { policy.bindings.append(try IAMPolicy.binding(grant)) }
        if let iamDefault {
            guard let mode = IAMPolicy.DefaultGrant(rawValue: iamDefault) else {
                throw ValidationError(
                    "--iam-default takes \(IAMPolicy.DefaultGrant.allCases.map(\.rawValue).joined(separator: ", ")); got '\(iamDefault)'")
            }
            policy.defaultGrant = mode
        }
        try policy.validate()
        configuration.iam = policy
        configuration.seed = seed
        configuration.requestLogFile = requestLog
        configuration.requestLogLimit = requestLogLimit
        configuration.stateFile = stateFile
        configuration.importDirectory = importDirectory
        return configuration
    }

    package func validate() throws {
        guard (0...1).contains(dropRate) else { throw ValidationError("--drop-rate must be between 0 and 1") }
        for name in allowedHost where !RequestGuard.isAllowedHostValue(name) {
            throw ValidationError("--allowed-host takes a host name (fcm-emulator), an IP address or '*', without a port; got \(Quoted.text(name))")
        }
        if snakeCaseFields && camelCaseFields { throw ValidationError("--snake-case-fields and --camel-case-fields contradict each other") }
        guard subscriptionQps >= 0, messagesPerMinute >= 0 else { throw ValidationError("quotas must not be negative") }
        guard let lifetime = Self.lifetimeSeconds(tokenLifetime), lifetime >= 1, lifetime <= TokenAuthority.maximumLifetime else {
            throw ValidationError("--token-lifetime must be between 1s and 1h, like 5s or 10m; got '\(tokenLifetime)'")
        }
        if importDirectory != nil && stateFile != nil {
            throw ValidationError("--import and --state-file both load a state at start: give one (--state-file FILE keeps saving to FILE)")
        }
        if oidcRequestToken != nil && acceptSubjectToken.isEmpty {
            throw ValidationError("--oidc-request-token needs an --accept-subject-token to hand out")
        }
    }

    package func run() async throws {
        guard let level = Logger.Level(rawValue: logLevel) else {
            throw ValidationError("unknown log level '\(logLevel)'")
        }
        var logger = Logger(label: "fcm-emulator") { StreamLogHandler.standardError(label: $0) }
        logger.logLevel = level
        let configuration: EmulatorConfiguration
        do {
            configuration = try makeConfiguration()
        } catch let error as EmulatorSetupError {
            throw ValidationError(error.description)
        }
        let displayHost = host.contains(":") ? "[\(host)]" : host
        let (app, services) = try await EmulatorApplication.build(configuration: configuration, logger: logger) { port in
            // Written unbuffered: whoever started us waits for this exact line to learn the port.
            FileHandle.standardOutput.write(Data("fcm-emulator listening on http://\(displayHost):\(port)\n".utf8))
        }
        let errorLogger = logger
        let saver = stateFile.map { path in
            Task { await StatePersistence.autosave(services, to: path) { errorLogger.error("\($0)") } }
        }
        try await app.runService()
        saver?.cancel()
        if let stateFile { try await StatePersistence.save(services, to: stateFile) }
        if let exportOnExit { try await StatePersistence.export(services, toDirectory: exportOnExit) }
    }
}

extension EmulatorCommand {
    /// Lets `main.swift` start the command without importing ArgumentParser itself.
    package static func runFromCommandLine() async { await main() }
}
