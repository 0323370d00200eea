import FCMBuildInfo
import Foundation

/// `/emulator/v1/…`: what tests, demos and users' CI use to seed, inspect, fault and reset the emulator.
/// Not part of FCM; needs no authentication.
struct AdminRoutes {
    let store: EmulatorStore
    let recorder: RequestRecorder
    let faults: FaultInjector
    let authority: TokenAuthority
    let calendar: PlatformCalendar
    let oidcRequestToken: String?
    let services: EmulatorServices

    init(services: EmulatorServices) {
        self.services = services
        store = services.store
        recorder = services.recorder
        faults = services.faults
        authority = services.authority
        calendar = services.calendar
        oidcRequestToken = services.configuration.oidcRequestToken
    }

    func handle(_ request: EmulatorRequest) async -> EmulatorResponse? {
        let s = request.segments
        guard s.count >= 3, s[0] == "emulator", s[1] == "v1" else { return nil }
        if let answer = await AdminListingRoutes(store: store).handle(request, path: Array(s[2...])) { return answer }
        switch (request.method, Array(s[2...])) {
        case ("GET", ["health"]):
            // What a CI step or a container health check polls: answered once the emulator serves requests.
            return .json(200, ["status": "ok", "version": BuildInfo.version, "build": BuildInfo.summary("fcm-emulator")])
        case ("GET", ["state"]):
            return await store.stateDump()
        case ("GET", ["export"]):
            var answer = EmulatorResponse(status: 200, body: await StatePersistence.export(services))
            if request.query["download"] != nil {
                answer.extraHeaders["Content-Disposition"] = "attachment; filename=\"\(StateExport.fileName)\""
            }
            return answer
        case ("POST", ["import"]):
            do {
                let contents = try StateExport.read(request.body)
                await StatePersistence.restore(contents, into: services, replacingSenders: true)
                let counts = await store.counts
                return .json(
                    200, ["registrations": counts.registrations, "subscriptions": counts.subscriptions, "groups": counts.groups])
            } catch {
                return .rpcError(400, "not imported: \(error)")
            }
        case ("POST", ["reset"]):
            await store.reset()
            await recorder.reset()
            return .json(200, [String: Any]())
        case ("POST", ["registrations"]):
            return await register(request)
        case ("DELETE", let rest) where rest.count == 2 && rest[0] == "registrations":
            return await store.uninstall(rest[1])
                ? .json(200, [String: Any]()) : .rpcError(404, "no such registration: register it first")
        case ("GET", let rest) where rest.count == 3 && rest[0] == "registrations" && rest[2] == "inbox":
            guard let inbox = await store.inbox(of: rest[1]) else { return .rpcError(404, "no such registration") }
            let formatter = ISO8601DateFormatter()
            let messages: [[String: Any]] = inbox.map {
                // The message as it arrived: re-encoding parsed JSON would turn 1 into true on Linux.
                ["name": $0.name, "received_at": formatter.string(from: $0.receivedAt), "message": RawJSON(text: $0.message)]
            }
            return .json(200, ["messages": messages])
        case ("GET", ["principals"]):
            return .json(200, await services.iam.listing(authority: authority, noAuth: services.configuration.noAuth))
        case ("GET", ["oidc-token"]):
            return await identityToken(request)
        case ("GET", ["requests"]):
            let (entries, last) = await recorder.entries(matching: .init(query: request.query))
            return .json(200, ["requests": entries.map(\.json), "last_seq": last])
        case ("GET", ["stats"]):
            let counts = await store.counts
            let refused = await services.refusals.stats
            return await recorder.stats(
                adding: refused.merging(
                    ["registrations": counts.registrations, "subscriptions": counts.subscriptions, "groups": counts.groups]
                ) { _, count in count })
        case ("GET", ["faults"]):
            return Self.encode(await faults.faults)
        case ("PUT", ["faults"]):
            guard let settings = try? JSONDecoder().decode(FaultSettings.self, from: request.body) else {
                return .rpcError(
                    400,
                    "expected a JSON object with latency_ms, jitter_ms, error_rates, drop_rate, failing_registrations, html_errors, retry_after_seconds"
                )
            }
            if let problem = settings.problem { return .rpcError(400, problem) }
            await faults.replace(faults: settings)
            return Self.encode(settings)
        case ("GET", ["quotas"]):
            return Self.encode(await faults.quotas)
        case ("PUT", ["quotas"]):
            guard let settings = try? JSONDecoder().decode(QuotaSettings.self, from: request.body) else {
                return .rpcError(400, "expected a JSON object with subscription_qps, messages_per_minute, retry_after_seconds")
            }
            if let problem = settings.problem { return .rpcError(400, problem) }
            await faults.replace(quotas: settings)
            return Self.encode(settings)
        case ("GET", ["clock"]):
            return await calendar.response
        case ("PUT", ["clock"]):
            // {"now": "2027-09-30" or an ISO 8601 time, or null for the system clock; "new_project": bool}
            let body = request.jsonObject ?? [:]
            var now: Date?
            if let text = body["now"] as? String {
                let day = ISO8601DateFormatter()
                day.formatOptions = [.withFullDate]
                guard let parsed = ISO8601DateFormatter().date(from: text) ?? day.date(from: text),
                    (Timestamp.earliest...Timestamp.latest).contains(parsed.timeIntervalSince1970)
                else {
                    return .rpcError(400, "now must be a date (2027-09-30) or an ISO 8601 time, in the years 1 to 9999")
                }
                now = parsed
            }
            await calendar.set(now: now, newProject: body["new_project"] as? Bool ?? false)
            await store.touch()  // the clock is exported with the state: --state-file saves it
            return await calendar.response
        case ("POST", ["tokens:expire"]):
            await authority.expireAll()
            return .json(200, [String: Any]())
        default:
            return nil
        }
    }

    static func encode<Value: Encodable>(_ value: Value) -> EmulatorResponse {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return EmulatorResponse(status: 200, body: (try? encoder.encode(value)) ?? Data("{}".utf8))
    }

    func register(_ request: EmulatorRequest) async -> EmulatorResponse {
        guard let body = request.jsonObject, let items = body["registrations"] as? [[String: Any]] else {
            return .rpcError(
                400,
                "expected {\"project\": \"ID\", \"sender_id\": \"NUMBER\", \"registrations\": [{\"token\": \"…\"} or {\"fid\": \"…\"}, "
                    + "optional \"project\", \"platform\" and \"app\"]}; project and sender_id are optional")
        }
        let project = (body["project"] as? String).flatMap { $0.isEmpty ? nil : $0 }
        if let sender = body["sender_id"] as? String, !sender.isEmpty {
            guard let project else { return .rpcError(400, "sender_id names a project's number: give the project (id) too") }
            await store.link(sender: sender, to: project)
        }
        var count = 0
        for item in items {
            let kind = item["fid"] != nil ? "fid" : "token"
            guard let id = (item["fid"] ?? item["token"]) as? String, EmulatorStore.isWellFormed(id) else {
                return .rpcError(400, "registration \(count): needs a non-empty 'token' or 'fid' without whitespace")
            }
            let owner = (item["project"] as? String).flatMap { $0.isEmpty ? nil : $0 } ?? project
            await store.register(id, kind: kind, project: owner, platform: item["platform"] as? String, app: item["app"] as? String)
            count += 1
        }
        return .json(200, ["registered": count])
    }

    /// A CI runner's identity-token endpoint, as GitHub serves ACTIONS_ID_TOKEN_REQUEST_URL: the request token
    /// as a bearer, and `{"value": TOKEN}` back. The token is one STS accepts, so a credentials file shaped
    /// like google-github-actions/auth's (a url source with headers) signs in against the emulator.
    func identityToken(_ request: EmulatorRequest) async -> EmulatorResponse {
        guard let expected = oidcRequestToken, let subject = authority.subjectTokens.sorted().first else {
            return .rpcError(404, "start fcm-emulator with --oidc-request-token and --accept-subject-token to serve identity tokens")
        }
        guard request.headers["authorization"] == "Bearer \(expected)" else {
            return .rpcError(401, "the identity-token request needs 'Authorization: Bearer' with the --oidc-request-token")
        }
        return .json(200, ["value": subject, "count": 1])
    }
}
