import Foundation

/// Where fcmctl sends its requests. `FCM_EMULATOR_HOST` points every API at the emulator, the Firebase
/// emulator convention (`FIRESTORE_EMULATOR_HOST`, …).
package struct FCMEndpoints: Sendable, Hashable {
    package var fcmBase: String
    package var iidBase: String
    package var usesEmulator: Bool

    package init(fcmBase: String, iidBase: String, usesEmulator: Bool) {
        self.fcmBase = fcmBase
        self.iidBase = iidBase
        self.usesEmulator = usesEmulator
    }

    package static let production = FCMEndpoints(
        fcmBase: "https://fcm.googleapis.com", iidBase: "https://iid.googleapis.com", usesEmulator: false)

    package static func emulator(hostAndPort: String) -> FCMEndpoints {
        let base = "http://\(hostAndPort)"
        return FCMEndpoints(fcmBase: base, iidBase: base, usesEmulator: true)
    }

    /// The device-group member export API exists per the 2026 docs, but its URL and response shape were
    /// not published (wire reference §3, [UNCERTAIN]); this one path must change if the real one differs.
    package static let groupExportPath = "/fcm/notification/export"
}

package enum URLComponentEncoder {
    /// Percent-encodes everything but RFC 3986 unreserved characters: registrations carry ':' and topic
    /// names may carry '%', both of which must reach the server as data, not syntax.
    package static func encode(_ text: String) -> String {
        let hex = Array("0123456789ABCDEF".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count + 8)
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "~"):
                out.append(byte)
            default:
                out += [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]]
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}
