import FCMBuildInfo
import FCMClient
import FCMViews
import Foundation
import Testing

/// `fcmctl version`, `--version` and `fcm-emulator --version`, read from the built binaries: they carry what the
/// build recorded (scripts/release/build-info.sh's header, compiled into this test bundle too) and the libcurl
/// they load at run time.
@Suite struct VersionTests {
    static var expectedLine: String {
        "fcmctl \(BuildInfo.version) (commit \(BuildInfo.commit), built \(BuildInfo.date), Swift \(BuildInfo.swiftVersion), "
            + "libcurl \(LibcurlVersion.current))\n"
    }

    @Test func versionAndTheFlagPrintOneLine() async throws {
        let command = try await CLI.runBinary(["version"])
        #expect(command.code == 0)
        #expect(command.stdout == Self.expectedLine)
        let flag = try await CLI.runBinary(["--version"])
        #expect(flag.code == 0)
        #expect(flag.stdout == Self.expectedLine)
        #expect(BuildInfo.version == FCMBuildInfoSource.version())
    }

    @Test func jsonHasTheFiveKeysSorted() async throws {
        let result = try await CLI.runBinary(["version", "--format", "json"])
        #expect(result.code == 0)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: String])
        #expect(
            object == [
                "buildDate": BuildInfo.date, "commit": BuildInfo.commit, "libcurl": LibcurlVersion.current,
                "swift": BuildInfo.swiftVersion, "version": BuildInfo.version,
            ])
        let keys = result.stdout.split(separator: "\n").compactMap { line in line.split(separator: "\"").dropFirst().first.map(String.init) }
        #expect(keys == ["buildDate", "commit", "libcurl", "swift", "version"])
        #expect(LibcurlVersion.current.first?.isNumber == true, "\(LibcurlVersion.current)")
    }

    /// What `make` wrote is what the binary says; a plain `swift build` has no header and says "unknown".
    @Test func theBuildInfoHeaderIsWhatTheBinarySays() throws {
        let header = BuildProducts.packageRoot.appendingPathComponent("Sources/CBuildInfo/build_info_generated.h")
        guard let text = try? String(contentsOf: header, encoding: .utf8) else {
            #expect(BuildInfo.commit == "unknown")
            #expect(BuildInfo.date == "unknown")
            return
        }
        #expect(text.contains("#define FCM_BUILD_COMMIT \"\(BuildInfo.commit)\""), "\(text)")
        #expect(text.contains("#define FCM_BUILD_DATE \"\(BuildInfo.date)\""), "\(text)")
        #expect(text.contains("#define FCM_BUILD_SWIFT_VERSION \"\(BuildInfo.swiftVersion)\""), "\(text)")
        #expect(BuildInfo.commit.range(of: #"^[0-9a-f]{12}(-dirty)?$"#, options: .regularExpression) != nil, "\(BuildInfo.commit)")
        #expect(BuildInfo.date.range(of: #"^\d{4}-\d{2}-\d{2}$"#, options: .regularExpression) != nil, "\(BuildInfo.date)")
    }

    @Test func emulatorVersionExitsZero() throws {
        let process = Process()
        process.executableURL = BuildProducts.emulator
        process.arguments = ["--version"]
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        #expect(
            String(decoding: data, as: UTF8.self)
                == "fcm-emulator \(BuildInfo.version) (commit \(BuildInfo.commit), built \(BuildInfo.date))\n")
    }
}

/// The version literal as the source spells it, which `make dist` names the archive after.
enum FCMBuildInfoSource {
    static func version() -> String? {
        let file = BuildProducts.packageRoot.appendingPathComponent("Sources/FCMBuildInfo/BuildInfo.swift")
        guard let text = try? String(contentsOf: file, encoding: .utf8),
            let match = text.firstMatch(of: /static let version = "([^"]+)"/)
        else { return nil }
        return String(match.1)
    }
}
