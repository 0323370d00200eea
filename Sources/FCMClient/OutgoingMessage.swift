import FCMCore
import Foundation

/// A downstream message in the HTTP v1 shape (wire reference §4). One image URL is set on every platform's
/// field, as the send-image guide shows: notification, Android, APNs (with mutable-content so iOS can
/// fetch it) and webpush.
package struct OutgoingMessage: Sendable {
    package enum Target: Sendable, Equatable {
        case token(String)
        case fid(String)
        case topic(String)
        case condition(String)
    }

    package var target: Target
    package var title: String?
    package var body: String?
    package var image: String?
    package var data: [String: String] = [:]

    package init(target: Target, title: String? = nil, body: String? = nil, image: String? = nil, data: [String: String] = [:]) {
        self.target = target
        self.title = title
        self.body = body
        self.image = image
        self.data = data
    }

    package var json: [String: Any] {
        var message: [String: Any] = [:]
        switch target {
        case .token(let value): message["token"] = value
        case .fid(let value): message["fid"] = value
        case .topic(let value): message["topic"] = value
        case .condition(let value): message["condition"] = value
        }
        var notification: [String: Any] = [:]
        if let title { notification["title"] = title }
        if let body { notification["body"] = body }
        if let image {
            notification["image"] = image
            message["android"] = ["notification": ["image": image]]
            message["apns"] = ["payload": ["aps": ["mutable-content": 1]], "fcm_options": ["image": image]]
            message["webpush"] = ["headers": ["image": image]]
        }
        if !notification.isEmpty { message["notification"] = notification }
        if !data.isEmpty { message["data"] = data }
        return message
    }

    /// The SendMessageRequest body exactly as `send` puts it on the wire, so tests can hold it to the contract.
    package func requestBody(validateOnly: Bool) -> Data {
        var body: [String: Any] = ["message": json]
        if validateOnly { body["validate_only"] = true }
        return FCMHTTPService.json(body)
    }
}

extension FCMHTTPService {
    /// `messages:send`; returns the message name. With `validateOnly` FCM checks the message and sends nothing.
    package func send(_ message: OutgoingMessage, validateOnly: Bool) async throws -> String {
        let url = "\(endpoints.fcmBase)/v1/projects/\(URLComponentEncoder.encode(project.id))/messages:send"
        let body = message.requestBody(validateOnly: validateOnly)
        let response = try await send(HTTPRequest(method: "POST", url: url, headers: v1Headers, body: body))
        let object = (try? JSONSerialization.jsonObject(with: response.body) as? [String: Any]) ?? [:]
        guard response.status == 200, let name = object["name"] as? String else {
            let error = FCMErrorBody(status: response.status, body: response.body)
            throw FCMServiceError(status: response.status, code: error.code, message: error.message)
        }
        return name
    }
}
