import Foundation

/// The legacy Instance ID server API at iid.googleapis.com (wire reference §1A, §2): batch subscribe and
/// unsubscribe with per-token results in input order, single relations, and `iid/info`. Its errors are
/// flat `{"error": "…"}` bodies.
struct IIDRoutes {
    let store: EmulatorStore
    let senderID: String
    /// Tells the project of the principal the API acts for.
    let iam: IAMCheck
    let authority: TokenAuthority
    /// Per-token errors to inject into batch answers (`iid_token_errors`).
    let faults: FaultInjector
    /// [GUESS] Whether a FID is taken where the IID API names registration tokens (`--accept-legacy-fids`).
    let acceptsFIDs: Bool

    static let batchLimit = 1000
    /// [GUESS] batchAdd's per-token PERMISSION_DENIED is recorded (wire reference §0.7); the single-token
    /// endpoints' answer is not, so the same code as a 403.
    static let otherProject = EmulatorResponse.flatError(403, "PERMISSION_DENIED")

    /// The IID API has no project in its URL: it acts for the OAuth principal's project (`IAMCheck.home`:
    /// a service account's own, named by its address). The `owner` token (what FCM_EMULATOR_HOST sends) and
    /// requests without a token under `--no-auth` belong to no project in particular, so to every one.
    func caller(_ request: EmulatorRequest) async -> EmulatorStore.Caller {
        guard let token = request.bearerToken, case .principal(let principal) = await authority.identity(of: token) else { return .any }
        return .project(await iam.home(of: principal))
    }
    static let topicPrefix = "/topics/"

    func handle(_ request: EmulatorRequest) async -> EmulatorResponse? {
        let s = request.segments
        guard s.first == "iid" else { return nil }
        if let refusal = DeviceGroupRoutes.missingAccessTokenAuth(request) { return refusal }
        switch (request.method, s) {
        case ("POST", ["iid", "v1:batchAdd"]): return await batch(request, adding: true, as: await caller(request))
        case ("POST", ["iid", "v1:batchRemove"]): return await batch(request, adding: false, as: await caller(request))
        case ("GET", let path) where path.count == 3 && path[1] == "info":
            return await info(path[2], details: request.query["details"] == "true", as: await caller(request))
        case ("POST", let path) where path.count == 6 && path[1] == "v1" && path[3] == "rel" && path[4] == "topics":
            return await relation(token: path[2], topic: path[5], as: await caller(request))
        default: return nil
        }
    }

    /// Accepts `/topics/name` or a bare name (the SDKs add the prefix; the regex allows it and `private/`).
    static func topicName(_ raw: String) -> String? {
        var name = raw.hasPrefix(topicPrefix) ? String(raw.dropFirst(topicPrefix.count)) : raw
        if name.hasPrefix("private/") { name = String(name.dropFirst("private/".count)) }
        return TopicSubscriptionRoutes.isValidTopic(name) ? name : nil
    }

    func batch(_ request: EmulatorRequest, adding: Bool, as caller: EmulatorStore.Caller) async -> EmulatorResponse {
        guard let body = request.jsonObject else { return .flatError(400, "InvalidJson") }
        guard let tokens = body["registration_tokens"] as? [String], !tokens.isEmpty else { return .flatError(400, "MissingIIdToken") }
        guard tokens.count <= Self.batchLimit else {
            return .flatError(400, "Too many registration tokens: at most \(Self.batchLimit) per request")
        }
        guard let raw = body["to"] as? String, let topic = Self.topicName(raw) else {
            return .flatError(400, "Topic name format is invalid")
        }
        var results: [[String: String]] = []
        results.reserveCapacity(tokens.count)
        // A token failed on its own is not looked at: its change is not made, whatever it would have been.
        let injected = await faults.tokenErrors(adding ? .iidBatchAdd : .iidBatchRemove, count: tokens.count)
        for (index, token) in tokens.enumerated() {
            if let code = injected[index] {
                results.append(["error": code])
                continue
            }
            switch await store.check(token, as: caller, recordFirstUse: adding, refusingFIDs: !acceptsFIDs) {
            case .malformed: results.append(["error": "INVALID_ARGUMENT"])
            case .notFound: results.append(["error": "NOT_FOUND"])
            case .otherProject: results.append(["error": "PERMISSION_DENIED"])
            case .valid:
                if adding {
                    let outcome = await store.subscribe(token, to: topic)
                    results.append(outcome == .tooManyTopics ? ["error": "TOO_MANY_TOPICS"] : [:])
                } else {
                    _ = await store.unsubscribe(token, from: topic)
                    results.append([:])
                }
            }
        }
        return .json(200, ["results": results])
    }

    func relation(token: String, topic raw: String, as caller: EmulatorStore.Caller) async -> EmulatorResponse {
        guard let topic = Self.topicName(raw) else { return .flatError(400, "Topic name format is invalid") }
        switch await store.check(token, as: caller, refusingFIDs: !acceptsFIDs) {
        case .malformed: return .flatError(400, "InvalidToken")
        case .notFound: return .flatError(404, "No information found about this instance id.")
        case .otherProject: return Self.otherProject
        case .valid:
            if await store.subscribe(token, to: topic) == .tooManyTopics { return .flatError(400, "TOO_MANY_TOPICS") }
            return .json(200, [String: Any]())
        }
    }

    func info(_ token: String, details: Bool, as caller: EmulatorStore.Caller) async -> EmulatorResponse {
        switch await store.check(token, as: caller, recordFirstUse: false, refusingFIDs: !acceptsFIDs) {
        case .malformed: return .flatError(400, "InvalidToken")
        case .notFound: return .flatError(404, "No information found about this instance id.")
        case .otherProject: return Self.otherProject
        case .valid:
            // In permissive mode a well-formed registration exists even before first use: report defaults
            // without recording it, so reads leave the state unchanged.
            let record = await store.record(of: token) ?? EmulatorStore.RegistrationRecord(kind: EmulatorStore.kind(of: token))
            var body: [String: Any] = [
                "application": record.app, "authorizedEntity": senderID, "platform": record.platform,
                "applicationVersion": "1", "scope": "*",
            ]
            // `rel` is omitted when there are no relations (php-fcm docs: "ID exists but is not registered to any topics").
            if details && !record.topics.isEmpty {
                let formatter = DateFormatter()
                formatter.dateFormat = "yyyy-MM-dd"
                formatter.timeZone = TimeZone(identifier: "UTC")
                body["rel"] = ["topics": record.topics.mapValues { ["addDate": formatter.string(from: $0)] }]
            }
            return .json(200, body)
        }
    }
}
