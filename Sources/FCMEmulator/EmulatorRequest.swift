import Foundation

/// A request reduced to what the handlers need: decoded path segments, query and body.
struct EmulatorRequest: Sendable {
    var method: String
    var path: String
    var segments: [String]
    var query: [String: String]
    var headers: [String: String]
    var body: Data

    init(method: String, rawPath: String, rawQuery: String?, headers: [String: String], body: Data) {
        self.method = method
        self.path = rawPath
        self.segments = rawPath.split(separator: "/", omittingEmptySubsequences: true).map { Self.decode(String($0)) }
        var query: [String: String] = [:]
        for item in (rawQuery ?? "").split(separator: "&") {
            let parts = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            query[Self.decode(String(parts[0]))] = parts.count > 1 ? Self.decode(String(parts[1])) : ""
        }
        self.query = query
        self.headers = headers
        self.body = body
    }

    static func decode(_ text: String) -> String {
        guard text.utf8.contains(UInt8(ascii: "%")) else { return text }
        return text.removingPercentEncoding ?? text
    }

    /// gRPC transcoding accepts both spellings of a query parameter; so do the SDKs' callers (wire reference §0.2).
    func query(_ camel: String, _ snake: String) -> String? { query[camel] ?? query[snake] }

    var jsonObject: [String: Any]? {
        if body.isEmpty { return nil }
        return try? JSONSerialization.jsonObject(with: body) as? [String: Any]
    }
}

/// An answer before it becomes a Hummingbird response.
struct EmulatorResponse: Sendable {
    var status: Int
    var body: Data
    var contentType = "application/json; charset=UTF-8"
    var extraHeaders: [String: String] = [:]
    /// Close the connection mid-response instead of answering: the "dropped connection" fault.
    var dropConnection = false

    init(status: Int, body: Data, contentType: String = "application/json; charset=UTF-8") {
        self.status = status
        self.body = body
        self.contentType = contentType
    }

    static func json(_ status: Int, _ object: Any) -> EmulatorResponse {
        EmulatorResponse(status: status, body: FastJSON.data(object))
    }

    /// The device-group and IID APIs' flat error shape: `{"error": "<string>"}`.
    static func flatError(_ status: Int, _ message: String) -> EmulatorResponse {
        json(status, ["error": message])
    }

    static let statusNames = [
        400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED", 404: "NOT_FOUND", 409: "ALREADY_EXISTS",
        429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 503: "UNAVAILABLE",
    ]

    /// google.rpc.Status, optionally with an FcmError detail, as the v1 APIs answer (wire reference §4).
    static func rpcError(_ status: Int, _ message: String, fcmErrorCode: String? = nil) -> EmulatorResponse {
        var error: [String: Any] = ["code": status, "message": message, "status": statusNames[status] ?? "UNKNOWN"]
        if let fcmErrorCode {
            error["details"] = [["@type": "type.googleapis.com/google.firebase.fcm.v1.FcmError", "errorCode": fcmErrorCode]]
        }
        return json(status, ["error": error])
    }
}

/// Lets validation helpers return a ready answer through `Result`.
extension EmulatorResponse: Error {}
