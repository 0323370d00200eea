import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import NIOPosix

package struct EmulatorConfiguration: Sendable {
    package var host = "127.0.0.1"
    package var port = 0
    /// Host names requests may be addressed by besides loopback and `host` (`--allowed-host`; `*`: any).
    package var allowedHosts: [String] = []
    /// Every well-formed registration exists, owned by the project of its first use (demos); off, only
    /// registrations made known through the admin API exist, as in FCM.
    package var autoRegister = false
    /// Serve the unconfirmed device-group member export (`--group-export`).
    package var groupExport = false
    /// [GUESS] FIDs on the device-group and IID APIs: no source says whether FCM takes them there. Taken by
    /// default, as before; `--no-accept-legacy-fids` refuses them as a string that is not a registration token.
    package var acceptLegacyFIDs = true
    /// Topic Subscription answers in snake_case (`--snake-case-fields`) instead of lowerCamelCase.
    package var snakeCaseFields = false
    package var noAuth = false
    package var htmlUnauthorized = false
    package var serviceAccountOut: String?
    package var trustedServiceAccounts: [String] = []
    package var acceptedTokens: [String] = []
    package var acceptedRefreshTokens: [String] = []
    /// Subject tokens STS accepts (`--accept-subject-token`).
    package var acceptedSubjectTokens: [String] = []
    /// The request token the CI identity-token stand-in wants (`--oidc-request-token`).
    package var oidcRequestToken: String?
    /// How long issued access tokens live, in seconds (`--token-lifetime`).
    package var tokenLifetime: Double = TokenAuthority.maximumLifetime
    /// The access scopes of the metadata server's instance (`--metadata-scope`).
    package var metadataScopes = MetadataServer.defaultScopes
    package var projectID = "emulator-project"
    package var senderID = "123456789012"
    var faults = FaultSettings()
    var quotas = QuotaSettings()
    /// Who may do what (`--iam`, `--iam-policy`, `--iam-default`).
    var iam = IAMPolicy()
    package var seed: UInt64 = 1
    package var requestLogFile: String?
    package var requestLogLimit = 1_000_000
    package var stateFile: String?
    /// `--import DIR`: start with the export in DIR.
    package var importDirectory: String?

    package init() {}
}

/// Everything a request may touch, shared by all connections.
struct EmulatorServices: Sendable {
    let configuration: EmulatorConfiguration
    let store: EmulatorStore
    let recorder: RequestRecorder
    let faults: FaultInjector
    let authority: TokenAuthority
    let iam: IAMCheck
    let calendar = PlatformCalendar()
    let guardian: RequestGuard
    let refusals = RefusalCounts()

    init(configuration: EmulatorConfiguration) throws {
        self.configuration = configuration
        store = EmulatorStore(autoRegister: configuration.autoRegister)
        recorder = try RequestRecorder(limit: configuration.requestLogLimit, logFile: configuration.requestLogFile)
        faults = FaultInjector(faults: configuration.faults, quotas: configuration.quotas, seed: configuration.seed)
        authority = TokenAuthority(
            staticTokens: configuration.acceptedTokens.map { TokenAuthority.acceptedToken($0, projectID: configuration.projectID) },
            refreshTokens: configuration.acceptedRefreshTokens, subjectTokens: configuration.acceptedSubjectTokens,
            lifetime: configuration.tokenLifetime,
            principals: [(MetadataServer.principal(projectID: configuration.projectID, projectNumber: configuration.senderID), "metadata server")])
        iam = IAMCheck(policy: configuration.iam, projectID: configuration.projectID, senderID: configuration.senderID, store: store)
        guardian = RequestGuard(boundHost: configuration.host, allowedHosts: configuration.allowedHosts)
    }
}

/// Dispatches every request itself rather than through Hummingbird's router: FCM paths carry
/// percent-encoded registrations and verbs after colons (`v1:batchAdd`, `messages:send`), which must be
/// matched exactly. Order per request: the guard against web pages (RequestGuard), the inspector page and admin API
/// (no auth), auth, faults and quotas, then the API handler.
struct EmulatorResponder: HTTPResponder {
    typealias Context = BasicRequestContext

    let services: EmulatorServices
    let deviceGroups: DeviceGroupRoutes
    let topicSubscriptions: TopicSubscriptionRoutes
    let iid: IIDRoutes
    let messages: MessageRoutes
    let tokens: TokenRoutes
    let admin: AdminRoutes

    init(services: EmulatorServices) {
        self.services = services
        let store = services.store
        deviceGroups = DeviceGroupRoutes(
            store: store, exportEnabled: services.configuration.groupExport, acceptsFIDs: services.configuration.acceptLegacyFIDs)
        topicSubscriptions = TopicSubscriptionRoutes(store: store, snakeCaseFields: services.configuration.snakeCaseFields)
        iid = IIDRoutes(
            store: store, senderID: services.configuration.senderID, iam: services.iam, authority: services.authority, faults: services.faults,
            acceptsFIDs: services.configuration.acceptLegacyFIDs)
        messages = MessageRoutes(store: store)
        let configuration = services.configuration
        tokens = TokenRoutes(
            authority: services.authority,
            metadata: MetadataServer(
                authority: services.authority, projectID: configuration.projectID, projectNumber: configuration.senderID,
                scopes: configuration.metadataScopes))
        admin = AdminRoutes(services: services)
    }

    static let maximumBodyBytes = 8 << 20
    /// An import carries a whole emulator: 100,000 registrations with ten topics each are some 60 MB.
    static let maximumImportBytes = 1 << 30

    func respond(to request: Request, context: Context) async throws -> Response {
        let start = ContinuousClock.now
        var headers: [String: String] = [:]
        for field in request.headers { headers[field.name.canonicalName.lowercased()] = field.value }
        // HTTP/1's Host header arrives as the request's authority, not as a field.
        if let authority = request.head.authority { headers["host"] = authority }
        // Before anything else, pages and API alike, and before the body is read: a web page's request
        // changes nothing and learns nothing.
        if let (reason, refusal) = services.guardian.refusal(method: request.method.rawValue, path: request.uri.path, headers: headers) {
            await services.refusals.count(reason)
            return Self.response(refusal)
        }
        let limit = request.uri.path == "/emulator/v1/import" ? Self.maximumImportBytes : Self.maximumBodyBytes
        let buffer = try await request.body.collect(upTo: limit)
        let incoming = EmulatorRequest(
            method: request.method.rawValue, rawPath: request.uri.path, rawQuery: request.uri.query, headers: headers,
            body: Data(buffer.readableBytesView))
        // The inspector page and the admin API are not FCM: neither is logged nor faulted.
        if let page = InspectorPage.answer(incoming) { return Self.response(page) }
        if let answer = await admin.handle(incoming) { return Self.response(answer) }

        let endpoint = Endpoint.classify(incoming)
        let registrations = endpoint.map { Self.registrations(in: incoming, endpoint: $0) } ?? []
        let identity = await services.authority.identity(of: incoming.bearerToken ?? "")
        let answer = await answer(incoming, endpoint: endpoint, registrations: registrations, identity: identity)
        let elapsed = ContinuousClock.now - start
        await services.recorder.record(
            .init(
                method: incoming.method, path: incoming.path, endpoint: endpoint?.rawValue ?? "unknown",
                status: answer.dropConnection ? 0 : answer.status,
                latencyMs: elapsed.seconds * 1000,
                bytesIn: incoming.body.count, bytesOut: answer.body.count, fields: TokenRequestFields.logged(incoming, endpoint: endpoint),
                userProject: incoming.headers["x-goog-user-project"], registrations: registrations,
                principal: identity.flatMap { if case .principal(let principal) = $0 { principal.member } else { nil } }))
        return Self.response(answer)
    }

    /// `identity`: who the request's bearer token speaks for, nil without a valid one.
    func answer(
        _ request: EmulatorRequest, endpoint: Endpoint?, registrations: [String], identity: TokenAuthority.Identity?
    ) async -> EmulatorResponse {
        guard let endpoint else { return .rpcError(404, "fcm-emulator does not serve \(request.method) \(request.path)") }
        let configuration = services.configuration
        if endpoint.requiresBearer && !configuration.noAuth {
            guard let token = request.bearerToken, let identity else { return Unauthorized.response(html: configuration.htmlUnauthorized) }
            if let refusal = ScopeCheck.refusal(endpoint, scopes: await services.authority.scopes(of: token)) { return refusal }
            if case .principal(let principal) = identity, let refusal = await services.iam.refusal(endpoint, request, principal: principal) {
                return refusal
            }
        }
        let cost = endpoint == .iidBatchAdd || endpoint == .iidBatchRemove ? max(1, registrations.count) : 1
        let verdict = await services.faults.decide(endpoint, registrations: registrations, cost: cost)
        let settings = await services.faults.faults
        switch verdict {
        case .proceed(let delay):
            await Self.wait(delay)
            if let refusal = await services.calendar.refusal(endpoint, request) { return refusal }
            return await route(request, endpoint: endpoint)
        case .fail(let fault, let delay):
            await Self.wait(delay)
            return InjectedErrors.response(fault, endpoint: endpoint, html: settings.htmlErrors, retryAfter: settings.retryAfterSeconds)
        case .drop(let delay):
            await Self.wait(delay)
            var dropped = EmulatorResponse(status: 200, body: Data())
            dropped.dropConnection = true
            return dropped
        case .commitThenDrop(let delay):
            await Self.wait(delay)
            var committed = await route(request, endpoint: endpoint)
            committed.dropConnection = true
            return committed
        case .quotaExceeded(let delay):
            await Self.wait(delay)
            return InjectedErrors.quotaExceeded(endpoint: endpoint, retryAfter: await services.faults.quotas.retryAfterSeconds)
        }
    }

    func route(_ request: EmulatorRequest, endpoint: Endpoint) async -> EmulatorResponse {
        let base = "http://" + (request.headers["host"] ?? "\(services.configuration.host):\(services.configuration.port)")
        if let answer = await tokens.handle(request, baseURL: base) { return answer }
        if let answer = await deviceGroups.handle(request) { return answer }
        if let answer = await topicSubscriptions.handle(request) { return answer }
        if let answer = await iid.handle(request) { return answer }
        if let answer = await messages.handle(request) { return answer }
        return .rpcError(404, "fcm-emulator does not serve \(request.method) \(request.path)")
    }

    /// The registrations a request touches, for `--fail-registration` and the IID quota cost.
    static func registrations(in request: EmulatorRequest, endpoint: Endpoint) -> [String] {
        let s = request.segments
        switch endpoint {
        case .topicsCreate, .topicsGet, .topicsList, .topicsPatch, .topicsDelete: return [s[4]]
        case .iidInfo, .iidRelation: return [s[2]]
        case .iidBatchAdd, .iidBatchRemove: return request.jsonObject?["registration_tokens"] as? [String] ?? []
        case .groupsMutate: return request.jsonObject?["registration_ids"] as? [String] ?? []
        case .messagesSend:
            let message = request.jsonObject?["message"] as? [String: Any]
            return [(message?["token"] ?? message?["fid"]) as? String].compactMap { $0 }
        default: return []
        }
    }

    static func wait(_ milliseconds: Double) async {
        guard milliseconds > 0 else { return }
        // An event loop's scheduled task is an entry in its timer heap; a Task.sleep arms a timer of its own,
        // and at thousands of delayed answers a second those timers cost more than the answers.
        let loop = MultiThreadedEventLoopGroup.singleton.next()
        try? await loop.scheduleTask(in: TimeAmount.microseconds(Int64(milliseconds * 1000))) {}.futureResult.get()
    }

    struct DroppedConnection: Error {}

    static func response(_ answer: EmulatorResponse) -> Response {
        var fields = HTTPFields()
        fields[.contentType] = answer.contentType
        for (name, value) in answer.extraHeaders {
            if let field = HTTPField.Name(name) { fields[field] = value }
        }
        if answer.dropConnection {
            // Promise a body, then fail while writing it: the client sees the connection cut mid-response.
            return Response(status: .ok, headers: fields, body: ResponseBody(contentLength: 64) { _ in throw DroppedConnection() })
        }
        return Response(status: .init(code: answer.status), headers: fields, body: ResponseBody(byteBuffer: ByteBuffer(bytes: answer.body)))
    }
}

package enum EmulatorApplication {
    /// Builds the emulator. `onListening` receives the bound port (useful with port 0) once any
    /// `--service-account-out` file is written.
    static func build(
        configuration: EmulatorConfiguration, logger: Logger, onListening: @escaping @Sendable (Int) async -> Void
    ) async throws -> (some ApplicationProtocol, EmulatorServices) {
        let services = try EmulatorServices(configuration: configuration)
        for path in configuration.trustedServiceAccounts {
            let (email, key, project) = try ServiceAccountFiles.read(path)
            await services.authority.trust(email: email, key: key, project: project, source: "--trust-service-account \(path)")
        }
        if let path = configuration.stateFile {
            try await StatePersistence.load(stateFile: path, into: services)
        }
        if let directory = configuration.importDirectory {
            try await StatePersistence.load(importDirectory: directory, into: services)
        }
        // The policy file's project numbers claim their sender ids, as a registration's sender_id does.
        for (project, number) in configuration.iam.projectNumbers.sorted(by: { $0.key < $1.key }) {
            await services.store.link(sender: number, to: project)
        }
        let app = Application(
            responder: EmulatorResponder(services: services),
            configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: "fcm-emulator"),
            onServerRunning: { channel in
                let port = channel.localAddress?.port ?? configuration.port
                if let out = configuration.serviceAccountOut {
                    do {
                        let (email, key) = try ServiceAccountFiles.generate(
                            to: out, projectID: configuration.projectID, tokenURI: "http://\(configuration.host):\(port)/token")
                        await services.authority.trust(email: email, key: key, project: configuration.projectID, source: "--service-account-out")
                    } catch {
                        logger.error("cannot write --service-account-out \(out): \(error)")
                    }
                }
                await onListening(port)
            },
            logger: logger)
        return (app, services)
    }
}
