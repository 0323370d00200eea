import Foundation

/// Where fcmctl sends its requests. `FCM_EMULATOR_HOST` points every API at the emulator, the Firebase
/// emulator convention (`FIRESTORE_EMULATOR_HOST`, …).
package struct FCMEndpoints: Sendable, Hashable {
    package var fcmBase: String
    package var iidBase: String
    package var usesEmulator: Bool
    /// A device-group member export to probe (`--group-export-url`), or nil: Google's migration page says
    /// such a GET exists, but no public page or SDK gives its URL or answer (wire reference §3), so fcmctl
    /// calls it only when an operator names it.
    package var groupExportURL: String?

    package init(fcmBase: String, iidBase: String, usesEmulator: Bool, groupExportURL: String? = nil) {
        self.fcmBase = fcmBase
        self.iidBase = iidBase
        self.usesEmulator = usesEmulator
        self.groupExportURL = groupExportURL
    }

    package static let production = FCMEndpoints(
        fcmBase: "https://fcm.googleapis.com", iidBase: "https://iid.googleapis.com", usesEmulator: false)

    package static func emulator(hostAndPort: String) -> FCMEndpoints {
        let base = "http://\(hostAndPort)"
        return FCMEndpoints(fcmBase: base, iidBase: base, usesEmulator: true)
    }
}
