import ArgumentParser
import Foundation
import Hummingbird
import Logging

/// `fcm-emulator`: a local stand-in for the FCM server APIs.
package struct EmulatorCommand: AsyncParsableCommand {
    package static let configuration = CommandConfiguration(
        commandName: "fcm-emulator",
        abstract: "A local stand-in for the Firebase Cloud Messaging server APIs.",
        discussion: """
            Serves the device-group API (/fcm/notification), the v1 Topic Subscription API \
            (/v1/projects/P/registrations/R/topicSubscriptions) and an admin API under /emulator/v1/ \
            (GET state, POST reset, POST registrations, DELETE registrations/ID, GET requests).
            Point fcmctl at it with FCM_EMULATOR_HOST=127.0.0.1:PORT. The first line on standard output \
            is 'fcm-emulator listening on http://HOST:PORT'.
            """)

    @Option(help: "Address to bind. Loopback by default: the emulator has no authentication yet.")
    var host = "127.0.0.1"

    @Option(help: "Port to bind; 0 picks a free one (read it from the first output line).")
    var port = 8085

    @Flag(help: "Accept only registrations added through POST /emulator/v1/registrations; others are NOT_FOUND.")
    var strictRegistrations = false

    @Flag(help: "Answer v1 list/get with lowerCamelCase fields (topicName) instead of snake_case (topic_name).")
    var camelCaseFields = false

    @Option(help: "Log level on standard error: trace, debug, info, notice, warning, error, critical.")
    var logLevel = "warning"

    package init() {}

    package func run() async throws {
        guard let level = Logger.Level(rawValue: logLevel) else {
            throw ValidationError("unknown log level '\(logLevel)'")
        }
        var logger = Logger(label: "fcm-emulator") { StreamLogHandler.standardError(label: $0) }
        logger.logLevel = level
        var configuration = EmulatorConfiguration()
        configuration.host = host
        configuration.port = port
        configuration.strictRegistrations = strictRegistrations
        configuration.camelCaseFields = camelCaseFields
        let displayHost = host.contains(":") ? "[\(host)]" : host
        let app = EmulatorApplication.build(configuration: configuration, logger: logger) { port in
            // Written unbuffered: whoever started us waits for this exact line to learn the port.
            FileHandle.standardOutput.write(Data("fcm-emulator listening on http://\(displayHost):\(port)\n".utf8))
        }
        try await app.runService()
    }
}

extension EmulatorCommand {
    /// Lets `main.swift` start the command without importing ArgumentParser itself.
    package static func runFromCommandLine() async { await main() }
}
