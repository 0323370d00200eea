import Foundation

/// Faults to inject, set by flags and replaced at run time with `PUT /emulator/v1/faults`.
struct FaultSettings: Codable, Sendable, Equatable {
    struct ErrorRate: Codable, Sendable, Equatable {
        /// An endpoint name such as `topics.create` (see `Endpoint`), or nil for every FCM endpoint.
        var endpoint: String?
        var status: Int
        var rate: Double
        /// The FcmError errorCode of the injected answer (`SENDER_ID_MISMATCH`); `status` may then be left out.
        var fcmErrorCode: String?

        enum CodingKeys: String, CodingKey {
            case endpoint, status, rate
            case fcmErrorCode = "fcm_error_code"
        }

        init(endpoint: String?, status: Int, rate: Double, fcmErrorCode: String? = nil) {
            self.endpoint = endpoint
            self.status = status
            self.rate = rate
            self.fcmErrorCode = fcmErrorCode
        }

        /// A code FCM documents brings its status; an unknown code needs an explicit one.
        init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            endpoint = try c.decodeIfPresent(String.self, forKey: .endpoint)
            rate = try c.decode(Double.self, forKey: .rate)
            fcmErrorCode = try c.decodeIfPresent(String.self, forKey: .fcmErrorCode)
            guard let status = try c.decodeIfPresent(Int.self, forKey: .status) ?? fcmErrorCode.flatMap({ FcmErrorCodes.statuses[$0] }) else {
                throw DecodingError.keyNotFound(
                    CodingKeys.status, .init(codingPath: c.codingPath, debugDescription: "status, or a known fcm_error_code (\(FcmErrorCodes.known))")
                )
            }
            self.status = status
        }

        var fault: InjectedFault { InjectedFault(status: status, fcmErrorCode: fcmErrorCode) }
    }

    var latencyMs: Double = 0
    var jitterMs: Double = 0
    var errorRates: [ErrorRate] = []
    var dropRate: Double = 0
    /// Requests whose change is made and whose reply is then lost (the connection is cut): per endpoint, or
    /// every mutating endpoint when the endpoint is nil. Status is unused.
    var dropAfterCommit: [ErrorRate] = []
    /// Registration → what its requests fail with: an HTTP status (500 by default) or an FcmError code.
    var failingRegistrations: [String: InjectedFault] = [:]
    /// Injected errors come as an HTML page instead of JSON, as some Google front ends answer.
    var htmlErrors = false
    var retryAfterSeconds: Int?
    /// Per-token RESOURCE_EXHAUSTED or INTERNAL within an IID batch's 200 answer.
    var iidTokenErrors: [IIDTokenErrorRate] = []

    enum CodingKeys: String, CodingKey {
        case latencyMs = "latency_ms"
        case jitterMs = "jitter_ms"
        case errorRates = "error_rates"
        case dropRate = "drop_rate"
        case dropAfterCommit = "drop_after_commit"
        case failingRegistrations = "failing_registrations"
        case htmlErrors = "html_errors"
        case retryAfterSeconds = "retry_after_seconds"
        case iidTokenErrors = "iid_token_errors"
    }

    init() {}

    /// Every field is optional in `PUT /emulator/v1/faults`: what is left out is off.
    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        latencyMs = try c.decodeIfPresent(Double.self, forKey: .latencyMs) ?? 0
        jitterMs = try c.decodeIfPresent(Double.self, forKey: .jitterMs) ?? 0
        errorRates = try c.decodeIfPresent([ErrorRate].self, forKey: .errorRates) ?? []
        dropRate = try c.decodeIfPresent(Double.self, forKey: .dropRate) ?? 0
        dropAfterCommit = try c.decodeIfPresent([ErrorRate].self, forKey: .dropAfterCommit) ?? []
        failingRegistrations = try c.decodeIfPresent([String: InjectedFault].self, forKey: .failingRegistrations) ?? [:]
        htmlErrors = try c.decodeIfPresent(Bool.self, forKey: .htmlErrors) ?? false
        retryAfterSeconds = try c.decodeIfPresent(Int.self, forKey: .retryAfterSeconds)
        iidTokenErrors = try c.decodeIfPresent([IIDTokenErrorRate].self, forKey: .iidTokenErrors) ?? []
    }

    /// `0.3` (every mutating endpoint) or `groups.mutate=0.3,topics.create=0.1`, comma-separated.
    static func parseDropAfterCommit(_ text: String) throws -> [ErrorRate] {
        try text.split(separator: ",").map { item in
            let parts = item.split(separator: "=")
            let (endpoint, rateText): (String?, Substring) = parts.count == 2 ? (String(parts[0]), parts[1]) : (nil, item)
            guard let rate = Double(rateText), (0...1).contains(rate), parts.count <= 2 else {
                throw EmulatorSetupError("--drop-after-commit-rate: '\(item)' is not [ENDPOINT=]RATE, e.g. 0.3 or groups.mutate=0.3")
            }
            if let endpoint, Endpoint(rawValue: endpoint) == nil {
                throw EmulatorSetupError(
                    "--drop-after-commit-rate: unknown endpoint '\(endpoint)'; known: \(Endpoint.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            return ErrorRate(endpoint: endpoint, status: 0, rate: rate)
        }
    }

    /// `503=0.05,429=0.02`, `topics.create:503=0.1` or `messages.send:SENDER_ID_MISMATCH=1`, comma-separated.
    static func parseErrorRates(_ text: String) throws -> [ErrorRate] {
        try text.split(separator: ",").map { item in
            let sides = item.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
            let (endpoint, spec): (String?, Substring) = sides.count == 2 ? (String(sides[0]), sides[1]) : (nil, item)
            let parts = spec.split(separator: "=")
            guard parts.count == 2, endpoint?.isEmpty != true, let fault = InjectedFault(parts[0]), let rate = Double(parts[1]),
                (0...1).contains(rate)
            else {
                throw EmulatorSetupError(
                    "--error-rate: '\(item)' is not [ENDPOINT:]STATUS=RATE, e.g. 503=0.05 or messages.send:SENDER_ID_MISMATCH=1 "
                        + "(FcmError codes: \(FcmErrorCodes.known))")
            }
            if let endpoint, Endpoint(rawValue: endpoint) == nil {
                throw EmulatorSetupError(
                    "--error-rate: unknown endpoint '\(endpoint)'; known: \(Endpoint.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            return ErrorRate(endpoint: endpoint, status: fault.status, rate: rate, fcmErrorCode: fault.fcmErrorCode)
        }
    }

    /// The longest latency or jitter: ten minutes, past any client's deadline. Beyond it a delay in
    /// microseconds would not fit the timer's 64 bits.
    static let maximumDelayMs = 600_000.0

    /// `50ms`, `1.5s`, `250us` or a bare number of milliseconds.
    static func parseMilliseconds(_ text: String) throws -> Double {
        let units: [(String, Double)] = [("ms", 1), ("us", 0.001), ("s", 1000), ("", 1)]
        for (suffix, factor) in units where text.hasSuffix(suffix) {
            if let value = Double(text.dropLast(suffix.count)).map({ $0 * factor }), (0...maximumDelayMs).contains(value) { return value }
        }
        throw EmulatorSetupError("'\(text)' is not a duration from 0 to 10 minutes such as 50ms or 1.5s")
    }

    /// What is wrong with settings given to `PUT /emulator/v1/faults`, held to the limits the flags have.
    var problem: String? {
        for (name, delay) in [("latency_ms", latencyMs), ("jitter_ms", jitterMs)] where !(0...Self.maximumDelayMs).contains(delay) {
            return "\(name): \(delay) is out of range, expected 0 to \(Int(Self.maximumDelayMs)) (ten minutes)"
        }
        guard (0...1).contains(dropRate) else { return "drop_rate: \(dropRate) is out of range, expected 0 to 1" }
        for (name, rates) in [("error_rates", errorRates), ("drop_after_commit", dropAfterCommit)] {
            for (index, rate) in rates.enumerated() {
                guard (0...1).contains(rate.rate) else { return "\(name)[\(index)].rate: \(rate.rate) is out of range, expected 0 to 1" }
                if let endpoint = rate.endpoint, Endpoint(rawValue: endpoint) == nil {
                    return
                        "\(name)[\(index)].endpoint: \(Quoted.text(endpoint)) is not an endpoint (\(Endpoint.allCases.map(\.rawValue).joined(separator: ", ")))"
                }
                if name == "error_rates", !InjectedFault.statuses.contains(rate.status) {
                    return "error_rates[\(index)].status: \(rate.status) is out of range, expected 400 to 599"
                }
            }
        }
        for (id, fault) in failingRegistrations.sorted(by: { $0.key < $1.key }) where !InjectedFault.statuses.contains(fault.status) {
            return "failing_registrations.\(Quoted.text(id)): status \(fault.status) is out of range, expected 400 to 599"
        }
        if let retryAfterSeconds, retryAfterSeconds < 0 { return "retry_after_seconds: \(retryAfterSeconds) is negative" }
        for (index, rate) in iidTokenErrors.enumerated() {
            if let problem = rate.problem("iid_token_errors[\(index)]") { return problem }
        }
        return nil
    }
}

/// Quotas, set by flags and replaced at run time with `PUT /emulator/v1/quotas`. Zero means unlimited.
struct QuotaSettings: Codable, Sendable, Equatable {
    /// Topic subscription changes per second per project (FCM: 3,000).
    var subscriptionQPS: Double = 3000
    /// Downstream messages per minute per project (FCM: 600,000).
    var messagesPerMinute: Double = 600_000
    /// Sent as Retry-After on quota answers when set.
    var retryAfterSeconds: Int?

    enum CodingKeys: String, CodingKey {
        case subscriptionQPS = "subscription_qps"
        case messagesPerMinute = "messages_per_minute"
        case retryAfterSeconds = "retry_after_seconds"
    }

    init(subscriptionQPS: Double = 3000, messagesPerMinute: Double = 600_000, retryAfterSeconds: Int? = nil) {
        self.subscriptionQPS = subscriptionQPS
        self.messagesPerMinute = messagesPerMinute
        self.retryAfterSeconds = retryAfterSeconds
    }

    /// What is wrong with settings given to `PUT /emulator/v1/quotas`.
    var problem: String? {
        guard subscriptionQPS >= 0, messagesPerMinute >= 0 else { return "subscription_qps and messages_per_minute must not be negative" }
        if let retryAfterSeconds, retryAfterSeconds < 0 { return "retry_after_seconds: \(retryAfterSeconds) is negative" }
        return nil
    }

    /// Fields left out of `PUT /emulator/v1/quotas` take FCM's defaults.
    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        subscriptionQPS = try c.decodeIfPresent(Double.self, forKey: .subscriptionQPS) ?? 3000
        messagesPerMinute = try c.decodeIfPresent(Double.self, forKey: .messagesPerMinute) ?? 600_000
        retryAfterSeconds = try c.decodeIfPresent(Int.self, forKey: .retryAfterSeconds)
    }
}

/// The FCM endpoints the emulator serves, named for logs, stats and per-endpoint faults.
enum Endpoint: String, CaseIterable, Sendable {
    case groupsMutate = "groups.mutate"
    case groupsGet = "groups.get"
    case groupsExport = "groups.export"
    case topicsCreate = "topics.create"
    case topicsGet = "topics.get"
    case topicsList = "topics.list"
    case topicsPatch = "topics.patch"
    case topicsDelete = "topics.delete"
    case iidBatchAdd = "iid.batchAdd"
    case iidBatchRemove = "iid.batchRemove"
    case iidInfo = "iid.info"
    case iidRelation = "iid.relation"
    case messagesSend = "messages.send"
    case oauthToken = "oauth.token"
    case stsToken = "sts.token"
    case iamGenerateAccessToken = "iam.generateAccessToken"
    case metadata = "metadata"

    /// The API family decides the error body shape: flat `{"error": "…"}` or google.rpc.Status.
    var usesFlatErrors: Bool { rawValue.hasPrefix("groups.") || rawValue.hasPrefix("iid.") }

    var requiresBearer: Bool { self != .oauthToken && self != .stsToken && self != .metadata }

    var isMutating: Bool { changesSubscriptions || self == .groupsMutate || self == .messagesSend }

    var changesSubscriptions: Bool { [.topicsCreate, .topicsPatch, .topicsDelete, .iidBatchAdd, .iidBatchRemove, .iidRelation].contains(self) }

    static func classify(_ request: EmulatorRequest) -> Endpoint? {
        let s = request.segments
        let m = request.method
        switch s.first {
        case "fcm":
            if s == ["fcm", "notification"] { return m == "POST" ? .groupsMutate : .groupsGet }
            return s == ["fcm", "notification", "export"] ? .groupsExport : nil
        case "v1":
            if s == ["v1", "token"] || s == ["v1", "oauthtoken"] { return m == "POST" ? .stsToken : nil }
            if s.count == 5, s[1] == "projects", s[3] == "serviceAccounts" { return m == "POST" ? .iamGenerateAccessToken : nil }
            if s.count == 4, s[1] == "projects", s[3] == "messages:send" { return .messagesSend }
            guard s.count >= 6, s[1] == "projects", s[3] == "registrations", s[5] == "topicSubscriptions" else { return nil }
            switch (m, s.count) {
            case ("POST", 6): return .topicsCreate
            case ("GET", 6): return .topicsList
            case ("GET", 7): return .topicsGet
            case ("PATCH", 7): return .topicsPatch
            case ("DELETE", 7): return .topicsDelete
            default: return nil
            }
        case "iid":
            if s == ["iid", "v1:batchAdd"] { return .iidBatchAdd }
            if s == ["iid", "v1:batchRemove"] { return .iidBatchRemove }
            if s.count == 3, s[1] == "info" { return .iidInfo }
            if s.count == 6, s[1] == "v1", s[3] == "rel", s[4] == "topics" { return .iidRelation }
            return nil
        case "token", "tokeninfo": return .oauthToken
        case "computeMetadata": return .metadata
        case nil where request.headers["metadata-flavor"] != nil: return .metadata
        default: return nil
        }
    }
}
