import Foundation

/// A per-token error of the IID batch API to inject: within a 200 answer, a share of the tokens come back as
/// `{"error": CODE}` and their change is not made. Google's IID reference lists both codes among a batch's
/// per-token results and says to retry them ("The backend server failed for unknown reasons. Retry the
/// request"; "Too many subscription or unsubscription requests in a short period of time. Retry with
/// exponential backoff"); firebase-admin-node maps them to `messaging/internal-error` and
/// `messaging/topics-subscription-rate-exceeded` (`TOPIC_MGT_SERVER_TO_CLIENT_CODE`), firebase-admin-python
/// hands the raw code back as `ErrorInfo.reason`. [GUESS] How often FCM answers them, and whether a token
/// answered so is spread at random through a batch, no source says: the rates are the caller's.
struct IIDTokenErrorRate: Codable, Sendable, Equatable {
    /// `iid.batchAdd` or `iid.batchRemove`; nil for both.
    var endpoint: String?
    var error: String
    var rate: Double

    /// The per-token codes that mean "retry": the others (NOT_FOUND, INVALID_ARGUMENT, TOO_MANY_TOPICS,
    /// PERMISSION_DENIED) the emulator answers from its state.
    static let codes = ["RESOURCE_EXHAUSTED", "INTERNAL"]
    static let endpoints = [Endpoint.iidBatchAdd.rawValue, Endpoint.iidBatchRemove.rawValue]

    /// What is wrong with this setting, `field` naming it (`iid_token_errors[0]`).
    func problem(_ field: String) -> String? {
        guard Self.codes.contains(error) else {
            return "\(field).error: \(Quoted.text(error)) is not a per-token error to inject (\(Self.codes.joined(separator: ", ")))"
        }
        guard (0...1).contains(rate) else { return "\(field).rate: \(rate) is out of range, expected 0 to 1" }
        if let endpoint, !Self.endpoints.contains(endpoint) {
            return "\(field).endpoint: \(Quoted.text(endpoint)) is not an IID batch endpoint (\(Self.endpoints.joined(separator: ", ")))"
        }
        return nil
    }

    /// `RESOURCE_EXHAUSTED=0.05`, `iid.batchRemove:INTERNAL=0.01`, comma-separated.
    static func parse(_ text: String) throws -> [IIDTokenErrorRate] {
        try text.split(separator: ",").map { item in
            let sides = item.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
            let (endpoint, spec): (String?, Substring) = sides.count == 2 ? (String(sides[0]), sides[1]) : (nil, item)
            let parts = spec.split(separator: "=")
            guard parts.count == 2, let rate = Double(parts[1]) else {
                throw EmulatorSetupError(
                    "--iid-token-error-rate: '\(item)' is not [ENDPOINT:]CODE=RATE, e.g. RESOURCE_EXHAUSTED=0.05 or iid.batchRemove:INTERNAL=0.01")
            }
            let setting = IIDTokenErrorRate(endpoint: endpoint, error: String(parts[0]), rate: rate)
            if let problem = setting.problem("--iid-token-error-rate '\(item)'") { throw EmulatorSetupError(problem) }
            return setting
        }
    }
}
