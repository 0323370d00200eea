import Foundation

/// Finds the built executables: `swift test` builds every product next to the test bundle.
enum BuildProducts {
    static let directory: URL = {
        if let override = ProcessInfo.processInfo.environment["FCMCTL_BUILD_DIR"] {
            return URL(fileURLWithPath: override)
        }
        let executable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        var directory = executable.deletingLastPathComponent()
        // On Linux the test runner is `<build>/fcmctlPackageTests.xctest`; elsewhere it may sit deeper in a bundle.
        while !FileManager.default.fileExists(atPath: directory.appendingPathComponent("fcm-emulator").path),
            directory.pathComponents.count > 1
        {
            directory = directory.deletingLastPathComponent()
        }
        return directory
    }()

    static var emulator: URL { directory.appendingPathComponent("fcm-emulator") }
    static var fcmctl: URL { directory.appendingPathComponent("fcmctl") }
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()
}
