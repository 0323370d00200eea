import Foundation

/// One error to inject: an HTTP status and, optionally, the FcmError `errorCode` the answer carries, so a
/// test can meet the refusals that only FCM's send path produces (SENDER_ID_MISMATCH, THIRD_PARTY_AUTH_ERROR).
struct InjectedFault: Sendable, Equatable {
    var status: Int
    var fcmErrorCode: String?

    init(status: Int, fcmErrorCode: String? = nil) {
        self.status = status
        self.fcmErrorCode = fcmErrorCode
    }

    /// The statuses a fault may answer with: errors, and codes an HTTP response can carry.
    static let statuses = 400...599

    /// `503`, or an FcmError code such as `SENDER_ID_MISMATCH` (its status from FCM's table); nil otherwise.
    init?(_ text: some StringProtocol) {
        if let status = Int(text), Self.statuses.contains(status) {
            self.init(status: status)
        } else if let status = FcmErrorCodes.statuses[String(text)] {
            self.init(status: status, fcmErrorCode: String(text))
        } else {
            return nil
        }
    }
}

/// In `failing_registrations`: a status (`503`), an FcmError code (`"SENDER_ID_MISMATCH"`), or both as
/// `{"status": 403, "fcm_error_code": "…"}`; written back in the shortest of these forms that says it all.
extension InjectedFault: Codable {
    enum CodingKeys: String, CodingKey {
        case status
        case fcmErrorCode = "fcm_error_code"
    }

    init(from decoder: any Decoder) throws {
        if let value = try? decoder.singleValueContainer() {
            if let status = try? value.decode(Int.self) {
                self.init(status: status)
                return
            }
            if let code = try? value.decode(String.self) {
                guard let fault = InjectedFault(code) else {
                    throw DecodingError.dataCorruptedError(in: value, debugDescription: "not a status or an FcmError code (\(FcmErrorCodes.known))")
                }
                self = fault
                return
            }
        }
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let code = try c.decodeIfPresent(String.self, forKey: .fcmErrorCode)
        guard let status = try c.decodeIfPresent(Int.self, forKey: .status) ?? code.flatMap({ FcmErrorCodes.statuses[$0] }) else {
            throw DecodingError.keyNotFound(CodingKeys.status, .init(codingPath: c.codingPath, debugDescription: "status or a known fcm_error_code"))
        }
        self.init(status: status, fcmErrorCode: code)
    }

    func encode(to encoder: any Encoder) throws {
        if let code = fcmErrorCode, FcmErrorCodes.statuses[code] == status {
            var value = encoder.singleValueContainer()
            try value.encode(code)
        } else if fcmErrorCode == nil {
            var value = encoder.singleValueContainer()
            try value.encode(status)
        } else {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(status, forKey: .status)
            try c.encode(fcmErrorCode, forKey: .fcmErrorCode)
        }
    }
}

/// FCM's ErrorCode enum (wire reference §4): each code's HTTP status, and the message of a real answer where
/// one was recorded.
enum FcmErrorCodes {
    static let statuses: [String: Int] = [
        "INVALID_ARGUMENT": 400, "UNREGISTERED": 404, "SENDER_ID_MISMATCH": 403, "QUOTA_EXCEEDED": 429, "UNAVAILABLE": 503,
        "INTERNAL": 500, "THIRD_PARTY_AUTH_ERROR": 401, "APNS_AUTH_ERROR": 401,
    ]

    static let messages: [String: String] = [
        // Recorded in dcai/airnotifier#219 and laravel-notification-channels/fcm#84.
        "SENDER_ID_MISMATCH": "SenderId mismatch",
        // Recorded in Blackjacx/Assist#6; firebase-admin-node#3215 shows the same code with Google's generic
        // OAuth text instead, so a client must go by the code, never by this text.
        "THIRD_PARTY_AUTH_ERROR": "Auth error from APNS or Web Push Service",
        "APNS_AUTH_ERROR": "Auth error from APNS or Web Push Service",
        "UNREGISTERED": "Requested entity was not found.",
    ]

    static var known: String { statuses.keys.sorted().joined(separator: ", ") }
}

/// Error bodies for injected faults and exceeded quotas, shaped like each API family's real ones.
enum InjectedErrors {
    static func response(_ fault: InjectedFault, endpoint: Endpoint, html: Bool, retryAfter: Int?) -> EmulatorResponse {
        var answer: EmulatorResponse
        let status = fault.status
        let name = EmulatorResponse.statusNames[status] ?? "UNKNOWN"
        if html {
            let page = "<HTML>\n<HEAD>\n<TITLE>Error \(status)</TITLE>\n</HEAD>\n<BODY>\n<H1>Error \(status)</H1>\n</BODY>\n</HTML>\n"
            answer = EmulatorResponse(status: status, body: Data(page.utf8), contentType: "text/html; charset=UTF-8")
        } else if endpoint.usesFlatErrors {
            answer = .flatError(status, fault.fcmErrorCode ?? name)
        } else {
            let fcmCode = fault.fcmErrorCode ?? [429: "QUOTA_EXCEEDED", 500: "INTERNAL", 503: "UNAVAILABLE"][status]
            let message = fault.fcmErrorCode.flatMap { FcmErrorCodes.messages[$0] } ?? "Injected fault: \(name)"
            answer = .rpcError(status, message, fcmErrorCode: fcmCode)
        }
        if let retryAfter, [429, 503].contains(status) { answer.extraHeaders["Retry-After"] = String(retryAfter) }
        return answer
    }

    static func quotaExceeded(endpoint: Endpoint, retryAfter: Int?) -> EmulatorResponse {
        var answer: EmulatorResponse
        switch endpoint {
        case .iidBatchAdd, .iidBatchRemove, .iidRelation:
            answer = .flatError(429, "RESOURCE_EXHAUSTED")
        case .messagesSend:
            answer = .json(
                429,
                [
                    "error": [
                        "code": 429, "status": "RESOURCE_EXHAUSTED",
                        "message": "Quota exceeded for quota metric 'Messages' and limit 'Messages per minute' of service 'fcm.googleapis.com'.",
                        "details": [
                            ["@type": "type.googleapis.com/google.firebase.fcm.v1.FcmError", "errorCode": "QUOTA_EXCEEDED"],
                            [
                                "@type": "type.googleapis.com/google.rpc.QuotaFailure",
                                "violations": [["subject": "project", "description": "messages per minute"]],
                            ],
                        ],
                    ] as [String: Any]
                ])
        default:
            answer = .rpcError(
                429, "Quota exceeded for quota metric 'Topic subscription changes' per second per project.", fcmErrorCode: "QUOTA_EXCEEDED")
        }
        if let retryAfter { answer.extraHeaders["Retry-After"] = String(retryAfter) }
        return answer
    }
}
