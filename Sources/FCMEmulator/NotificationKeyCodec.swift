import Foundation

/// FCM returns a different but valid `notification_key` on every read (wire reference §0.6). Encoding the
/// group's internal id plus a random nonce reproduces that: every key decodes to its group, no two match,
/// and a key for a deleted group stays dead even if the name is created again.
enum NotificationKeyCodec {
    static let prefix = "APA91b"

    static func encode(groupID: Int) -> String {
        var nonce = [UInt8](repeating: 0, count: 48)
        for index in nonce.indices { nonce[index] = UInt8.random(in: 0...255) }
        let payload = Data("g\(groupID):".utf8) + Data(nonce)
        return prefix
            + payload.base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    static func decode(_ key: String) -> Int? {
        guard key.hasPrefix(prefix) else { return nil }
        var base64 = String(key.dropFirst(prefix.count))
            .replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        guard let data = Data(base64Encoded: base64), data.first == UInt8(ascii: "g"),
            let colon = data.firstIndex(of: UInt8(ascii: ":"))
        else { return nil }
        return Int(String(decoding: data[data.index(after: data.startIndex)..<colon], as: UTF8.self))
    }
}
