import Foundation

/// What an FCM error response says, read in the order the wire reference recommends: the FcmError
/// detail first, then the google.rpc status, then a flat `{"error": "…"}` string, then anything else
/// (an HTML 401 page, say) by HTTP status alone.
struct FCMErrorBody: Sendable {
    var code: String
    var message: String
    /// The IAM permission a 403 says the caller lacks (`cloudmessaging.topicSubscriptions.create`): Google's
    /// APIs name it in an ErrorInfo's `metadata.permission` (reason IAM_PERMISSION_DENIED) and in the message
    /// ("Permission 'X' denied on resource …").
    var permission: String?

    /// Both fields are printed: they are escaped here, once, for every caller (see `ConsoleText`).
    init(status: Int, body: Data) {
        let (code, message) = Self.read(status: status, body: body)
        self.code = ConsoleText.oneLine(code)
        self.message = ConsoleText.oneLine(message)
        permission = status == 403 ? IAMAdvice.permission(in: body) : nil
    }

    private static func read(status: Int, body: Data) -> (code: String, message: String) {
        let code: String
        let message: String
        let object = try? JSONSerialization.jsonObject(with: body) as? [String: Any]
        if let error = object?["error"] as? [String: Any] {
            let details = error["details"] as? [[String: Any]] ?? []
            func detail(_ type: String) -> [String: Any]? { details.first { ($0["@type"] as? String)?.hasSuffix(type) == true } }
            let fcmCode = detail("google.firebase.fcm.v1.FcmError")?["errorCode"] as? String
            message = error["message"] as? String ?? ""
            // A token without FCM's scopes is refused by Google's front end, not by FCM: no FcmError, only an
            // ErrorInfo. Its reason is what the user must act on, so it becomes the code, with the way out.
            if fcmCode == nil, detail("google.rpc.ErrorInfo")?["reason"] as? String == scopeInsufficient {
                return (scopeInsufficient, message + " " + scopeAdvice)
            }
            code = fcmCode ?? (error["status"] as? String) ?? statusName(status)
        } else if let flat = object?["error"] as? String {
            code = flat
            message = (object?["error_description"] as? String) ?? flat
        } else {
            code = statusName(status)
            let text = String(decoding: body.prefix(200), as: UTF8.self)
            message = text.contains("<") ? "a non-JSON (HTML) error page" : text
        }
        return (code, message)
    }

    static let scopeInsufficient = "ACCESS_TOKEN_SCOPE_INSUFFICIENT"
    static let scopeAdvice =
        "The access token carries neither https://www.googleapis.com/auth/firebase.messaging nor "
        + "https://www.googleapis.com/auth/cloud-platform: on a Compute Engine VM, give the instance the cloud-platform access "
        + "scope; a token in FCM_ACCESS_TOKEN or from gcloud must be minted with one of those scopes."

    /// FCM could not authenticate to APNs or web push (FcmError THIRD_PARTY_AUTH_ERROR, or its legacy alias):
    /// a 401 about the project's push credentials, not about the caller's token, so no token refresh helps.
    static func isThirdPartyAuthError(status: Int, body: Data) -> Bool {
        guard status == 401, body.count < 65536 else { return false }
        return ["THIRD_PARTY_AUTH_ERROR", "APNS_AUTH_ERROR"].contains(FCMErrorBody(status: status, body: body).code)
    }

    static func statusName(_ status: Int) -> String {
        switch status {
        case 400: "INVALID_ARGUMENT"
        case 401: "UNAUTHENTICATED"
        case 403: "PERMISSION_DENIED"
        case 404: "NOT_FOUND"
        case 409: "ALREADY_EXISTS"
        case 429: "RESOURCE_EXHAUSTED"
        case 500: "INTERNAL"
        case 503: "UNAVAILABLE"
        default: "HTTP_\(status)"
        }
    }

    /// Another project's registration, or a project the credentials may not use: a configuration error to
    /// report, never drift (a wrong project id would otherwise make every registration look gone).
    var meansWrongProject: Bool { code == "SENDER_ID_MISMATCH" || code == "PERMISSION_DENIED" }

    /// The registration itself is dead: drift, never retried (product.md inv. 8). INVALID_ARGUMENT
    /// counts only when FCM says the registration is what is invalid ("The registration token is not a valid
    /// FCM registration token", wire reference §4); any other 400 (a bad topic name, TOO_MANY_TOPICS, a request
    /// FCM did not like) is a failure, so it is never reported as done.
    var meansRegistrationGone: Bool {
        if ["NOT_FOUND", "UNREGISTERED"].contains(code) { return true }
        guard code == "INVALID_ARGUMENT" else { return false }
        let text = message.lowercased()
        return text.contains("not a valid fcm registration") || text.contains("not a valid registration")
            || text.contains("not valid for the sender") || text.contains("registration token is not valid")
            || text.contains("not a valid fcm registration token or fid")
    }
}
