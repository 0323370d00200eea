import CBuildInfo

/// What this binary is: the release version of fcmctl and fcm-emulator, and what `make` recorded when it built
/// them (the commit, `-dirty` when the tree had changes, the UTC build date, the Swift version).
package enum BuildInfo {
    /// The release version; `make dist` names the archive after it.
    package static let version = "0.1.0"

    /// `git rev-parse --short=12 HEAD`, with `-dirty` when the tree had uncommitted changes; "unknown" outside `make`.
    package static var commit: String { String(cString: fcm_build_commit()) }

    /// The UTC day of the build (SOURCE_DATE_EPOCH when set), 2025-06-01; "unknown" outside `make`.
    package static var date: String { String(cString: fcm_build_date()) }

    /// The Swift compiler's version, 6.3.1; "unknown" outside `make`.
    package static var swiftVersion: String { String(cString: fcm_build_swift_version()) }

    /// `PROGRAM 0.1.0 (commit 0123456789ab, built 2025-06-01)`: what `--version` starts with.
    package static func summary(_ program: String) -> String {
        "\(program) \(version) (commit \(commit), built \(date))"
    }
}
