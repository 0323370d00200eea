import ArgumentParser
import FCMBuildInfo
import FCMClient
import FCMViews

struct VersionCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "version",
        abstract: "Print fcmctl's version, the commit and day it was built, and the Swift and libcurl versions.")

    enum Format: String, ExpressibleByArgument, CaseIterable {
        case text
        case json
    }

    @Option(help: "text (one line, as --version prints it), or json (buildDate, commit, libcurl, swift, version).")
    var format: Format = .text

    func run() throws {
        switch format {
        case .text: Console.current.out(Self.text())
        case .json: Console.current.writeOut(Self.json())
        }
    }

    /// `fcmctl 0.1.0 (commit 0123456789ab, built 2025-06-01, Swift 6.3.1, libcurl 7.88.1)`; also `--version`.
    static func text() -> String {
        let summary = BuildInfo.summary("fcmctl")
        return "\(summary.dropLast()), Swift \(BuildInfo.swiftVersion), libcurl \(LibcurlVersion.current))"
    }

    /// One object, keys sorted, two-space indentation, like every other JSON fcmctl writes.
    static func json() -> String {
        JSONTree.object([
            ("buildDate", .string(BuildInfo.date)),
            ("commit", .string(BuildInfo.commit)),
            ("libcurl", .string(LibcurlVersion.current)),
            ("swift", .string(BuildInfo.swiftVersion)),
            ("version", .string(BuildInfo.version)),
        ]).serialized()
    }
}
