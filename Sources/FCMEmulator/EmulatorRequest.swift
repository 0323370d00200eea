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
        // Split on bytes: splitting a String by Character runs grapheme breaking over every registration.
        self.segments = rawPath.utf8.split(separator: UInt8(ascii: "/")).map { Self.decode($0) }
        var query: [String: String] = [:]
        for item in (rawQuery ?? "").utf8.split(separator: UInt8(ascii: "&")) {
            let parts = item.split(separator: UInt8(ascii: "="), maxSplits: 1, omittingEmptySubsequences: false)
            query[Self.decode(parts[0])] = parts.count > 1 ? Self.decode(parts[1]) : ""
        }
        self.query = query
        self.headers = headers
        self.body = body
    }

    static func decode(_ text: String) -> String { decode(Substring(text).utf8) }

    /// Percent-decodes bytes; text with a malformed escape, or whose result is not UTF-8, is kept as written.
    static func decode(_ bytes: Substring.UTF8View) -> String {
        guard bytes.contains(UInt8(ascii: "%")) else { return String(Substring(bytes)) }
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var index = bytes.startIndex
        while index < bytes.endIndex {
            let byte = bytes[index]
            if byte == UInt8(ascii: "%"), let high = bytes.index(index, offsetBy: 1, limitedBy: bytes.endIndex), high < bytes.endIndex,
                let low = bytes.index(high, offsetBy: 1, limitedBy: bytes.endIndex), low < bytes.endIndex,
                let value = hexValue(bytes[high]).flatMap({ h in hexValue(bytes[low]).map { h << 4 | $0 } })
            {
                out.append(value)
                index = bytes.index(after: low)
            } else if byte == UInt8(ascii: "%") {
                return String(Substring(bytes))  // as Foundation's removingPercentEncoding: all or nothing
            } else {
                out.append(byte)
                index = bytes.index(after: index)
            }
        }
        return String(validating: out, as: UTF8.self) ?? String(Substring(bytes))
    }

    static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// The token of an `Authorization: Bearer TOKEN` header.
    var bearerToken: String? {
        guard let header = headers["authorization"], header.hasPrefix("Bearer ") else { return nil }
        return String(header.dropFirst(7))
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
