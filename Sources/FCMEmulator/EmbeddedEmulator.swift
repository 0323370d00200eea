import ArgumentParser
import Hummingbird
import Logging

/// The emulator inside another program (the test suites): the application `fcm-emulator` runs, configured by
/// the same arguments, serving on its own tasks until `stop`. Starting a process per test costs more than the
/// tests that only need an FCM to talk to.
package final class EmbeddedEmulator: Sendable {
    /// The port it listens on (the one the system chose, for `--port 0`).
    package let port: Int
    private let serving: Task<Void, any Error>

    private init(port: Int, serving: Task<Void, any Error>) {
        self.port = port
        self.serving = serving
    }

    /// `arguments` as `fcm-emulator` takes them. Returns once it is listening.
    package static func start(arguments: [String]) async throws -> EmbeddedEmulator {
        let configuration = try EmulatorCommand.configuration(arguments)
        let logger = Logger(label: "fcm-emulator") { _ in SwiftLogNoOpLogHandler() }
        let (ports, listening) = AsyncStream.makeStream(of: Int.self)
        let (app, _) = try await EmulatorApplication.build(configuration: configuration, logger: logger) { port in
            listening.yield(port)
            listening.finish()
        }
        // No signal handlers: the signals of the process belong to the program the emulator lives in.
        let serving = Task { try await app.runService(gracefulShutdownSignals: []) }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next() else {
            serving.cancel()
            throw EmbeddedEmulatorError.notListening
        }
        return EmbeddedEmulator(port: port, serving: serving)
    }

    /// Stops serving and waits until the port is closed.
    package func stop() async {
        serving.cancel()
        _ = await serving.result
    }

    deinit { serving.cancel() }
}

/// The server ended before it listened (the address was taken, or a file it was to load was unreadable).
package enum EmbeddedEmulatorError: Error {
    case notListening
}
