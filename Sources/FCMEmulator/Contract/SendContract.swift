import Foundation

/// The contract of `POST /v1/projects/{p}/messages:send`: first the body against the SendMessageRequest
/// schema of Google's discovery document (as Google's JSON front end parses it, before FCM sees the
/// message), then FCM's documented rules on what the schema accepted.
enum SendContract {
    /// The violations of `body`, in the order Google would list them; empty when it passes. A body that is
    /// not a JSON object is left to the caller, which answers as FCM does for unparsable JSON.
    static func violations(of body: Data, schema: ContractSchema = .fcm) -> [ContractViolation] {
        guard let root = ContractJSON.parse(body), case .object = root else { return [] }
        var validator = ContractValidator(schema: schema)
        let request = validator.message(root, as: "SendMessageRequest", at: "")
        if !validator.violations.isEmpty { return validator.violations }
        guard let message = request["message"] else { return [] }
        return MessageRules.check(message).map { [$0] } ?? []
    }

    /// Google's shape for these refusals: every description in the message (one a line), each also a
    /// google.rpc.BadRequest field violation, beside the FcmError detail FCM adds to its INVALID_ARGUMENT.
    static func response(_ violations: [ContractViolation]) -> EmulatorResponse {
        let fieldViolations = violations.map { violation -> [String: Any] in
            var entry: [String: Any] = ["description": violation.description]
            if let field = violation.field { entry["field"] = field }
            return entry
        }
        let error: [String: Any] = [
            "code": 400, "message": violations.map(\.description).joined(separator: "\n"), "status": "INVALID_ARGUMENT",
            "details": [
                ["@type": "type.googleapis.com/google.firebase.fcm.v1.FcmError", "errorCode": "INVALID_ARGUMENT"],
                ["@type": "type.googleapis.com/google.rpc.BadRequest", "fieldViolations": fieldViolations],
            ],
        ]
        return .json(400, ["error": error])
    }
}
