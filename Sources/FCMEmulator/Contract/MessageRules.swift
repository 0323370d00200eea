import Foundation

/// What FCM's documentation says about a message that the discovery schema cannot express. These run on a
/// message the schema accepted, with members under their proto names; the first broken rule is reported.
/// The texts are the emulator's own: FCM's words for these refusals were never recorded.
enum MessageRules {
    static func check(_ message: ContractJSON) -> ContractViolation? {
        exclusiveAndroid(message) ?? dataKeys(message) ?? payloadSize(message) ?? images(message) ?? ttl(message)
            ?? apnsPriority(message) ?? webpushLink(message) ?? colors(message)
    }

    static func violation(_ field: String, _ description: String) -> ContractViolation {
        ContractViolation(field: field, description: description)
    }

    /// androidV2: "Mutually exclusive with `android`. Requests with both … will be rejected." (discovery doc)
    static func exclusiveAndroid(_ message: ContractJSON) -> ContractViolation? {
        guard message["android"] != nil, message["android_v2"] != nil else { return nil }
        return violation("message.android_v2", "Message.android and Message.android_v2 are mutually exclusive: send only one of them")
    }

    /// Message.data and the platform maps that override it.
    static func dataMaps(_ message: ContractJSON) -> [(String, ContractJSON)] {
        [
            ("message.data", message["data"]), ("message.android.data", message["android"]?["data"]),
            ("message.android_v2.data", message["android_v2"]?["data"]), ("message.webpush.data", message["webpush"]?["data"]),
        ].compactMap { path, map in map.map { (path, $0) } }
    }

    /// Message.data: "The key should not be a reserved word". The platform maps override it on the device,
    /// so the same keys are refused there too (a guess: the docs speak of Message.data only).
    static func dataKeys(_ message: ContractJSON) -> ContractViolation? {
        for (path, map) in dataMaps(message) {
            for (key, _) in map.members
            where MessageRoutes.reservedDataKeys.contains(key) || MessageRoutes.reservedDataPrefixes.contains(where: key.hasPrefix) {
                return violation(
                    path, "Invalid data key '\(key)': 'from', 'message_type' and keys starting with 'google.' or 'gcm.notification.' are reserved")
            }
        }
        return nil
    }

    /// "4096 bytes for most messages, or 2048 bytes in the case of messages to topics. This includes both the
    /// keys and the values." How FCM counts platform overrides is not documented; every data map and the
    /// notification's texts are added up, and the violation names the largest part.
    static func payloadSize(_ message: ContractJSON) -> ContractViolation? {
        var parts = dataMaps(message).map { path, map in
            (path, map.members.reduce(0) { $0 + $1.key.utf8.count + ($1.value.string?.utf8.count ?? 0) })
        }
        let notification = ["title", "body", "image"].reduce(0) { $0 + (message["notification"]?[$1]?.string?.utf8.count ?? 0) }
        parts.append(("message.notification", notification))
        let total = parts.reduce(0) { $0 + $1.1 }
        let limit = message["topic"] != nil || message["condition"] != nil ? MessageRoutes.topicPayloadLimit : MessageRoutes.payloadLimit
        guard total > limit, let largest = parts.max(by: { $0.1 < $1.1 }) else { return nil }
        return violation(largest.0, "Message payload too big: \(total) bytes; the limit is \(limit)")
    }

    /// Every platform's image field (send-image docs) must be an http(s) URL with a host.
    static func images(_ message: ContractJSON) -> ContractViolation? {
        let fields: [(String, ContractJSON?)] = [
            ("message.notification.image", message["notification"]?["image"]),
            ("message.android.notification.image", message["android"]?["notification"]?["image"]),
            ("message.android_v2.remote_notification.notification.image", message["android_v2"]?["remote_notification"]?["notification"]?["image"]),
            ("message.apns.fcm_options.image", message["apns"]?["fcm_options"]?["image"]),
            ("message.webpush.headers.image", message["webpush"]?["headers"]?["image"]),
        ]
        for case (let path, .string(let value)?) in fields where !isURL(value, schemes: ["http", "https"]) {
            return violation(path, "Invalid image URL at '\(path)': '\(value)'")
        }
        return nil
    }

    /// "The maximum time to live supported is 4 weeks … Set it to 0 if want to send the message immediately."
    static func ttl(_ message: ContractJSON) -> ContractViolation? {
        for config in ["android", "android_v2"] {
            guard let ttl = message[config]?["ttl"]?.string, let seconds = ContractValidator.seconds(ofDuration: ttl) else { continue }
            if !(0...Double(MessageRoutes.maximumTTLSeconds)).contains(seconds) {
                return violation(
                    "message.\(config).ttl",
                    "Invalid \(config).ttl '\(ttl)': a duration such as \"3600s\", at most \(MessageRoutes.maximumTTLSeconds)s")
            }
        }
        return nil
    }

    /// "When sending payloads containing only data fields to iOS devices, only normal priority
    /// ("apns-priority": "5") is allowed" (Message.data); "Messages sent with high priority are rejected by the
    /// FCM backend with the error INVALID_ARGUMENT" (concept-options). Data only: no `notification` and an
    /// `aps` without alert, badge or sound.
    static func apnsPriority(_ message: ContractJSON) -> ContractViolation? {
        guard let apns = message["apns"], message["notification"] == nil else { return nil }
        let priority = apns["headers"]?.members.last { $0.key.lowercased() == "apns-priority" }?.value.string
        let aps = apns["payload"]?["aps"]
        guard priority == "10", aps?["alert"] == nil, aps?["badge"] == nil, aps?["sound"] == nil else { return nil }
        return violation(
            "message.apns.headers",
            "Invalid apns-priority '10' for a data-only message: messages to Apple devices without a notification must use apns-priority 5")
    }

    /// WebpushFcmOptions.link: "For all URL values, HTTPS is required."
    static func webpushLink(_ message: ContractJSON) -> ContractViolation? {
        guard let link = message["webpush"]?["fcm_options"]?["link"]?.string, !isURL(link, schemes: ["https"]) else { return nil }
        return violation("message.webpush.fcm_options.link", "Invalid webpush link '\(link)': message.webpush.fcm_options.link must be an HTTPS URL")
    }

    /// AndroidNotification.color: "The notification's icon color, expressed in #rrggbb format."
    static func colors(_ message: ContractJSON) -> ContractViolation? {
        let fields: [(String, ContractJSON?)] = [
            ("message.android.notification.color", message["android"]?["notification"]?["color"]),
            ("message.android_v2.remote_notification.notification.color", message["android_v2"]?["remote_notification"]?["notification"]?["color"]),
        ]
        for case (let path, .string(let color)?) in fields where color.range(of: "^#[0-9a-fA-F]{6}$", options: .regularExpression) == nil {
            return violation(path, "Invalid color '\(color)' at '\(path)': expected #rrggbb")
        }
        return nil
    }

    static func isURL(_ text: String, schemes: Set<String>) -> Bool {
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), let host = url.host else { return false }
        return schemes.contains(scheme) && !host.isEmpty
    }
}
