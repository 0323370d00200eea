import ArgumentParser
import FCMBuildInfo
import FCMClient
import FCMCore
import FCMEngine
import FCMViews

/// `fcmctl`: FCM device groups and topic subscriptions as code.
package struct FCMCtl: AsyncParsableCommand {
    package static let version = BuildInfo.version

    package static let configuration = CommandConfiguration(
        commandName: "fcmctl",
        abstract: "Keep Firebase Cloud Messaging device groups and topic subscriptions as code.",
        discussion: """
            Exit codes: 0 success (plan: no changes with --detailed-exitcode), 1 error, 2 changes present \
            (--detailed-exitcode), 3 apply partly failed (re-running is safe), 4 the state is locked by another \
            run (the holder is printed; see --lock-timeout and `state unlock`), 5 a saved plan is stale (the state, \
            the manifest or what it touches in FCM changed since `plan -out`; nothing was sent), 64 usage error, \
            130 / 143 interrupted by SIGINT / SIGTERM (an apply stops sending, writes its state and releases its lock \
            first; re-running continues).
            """,
        version: VersionCommand.text(),
        subcommands: [
            ValidateCommand.self, FmtCommand.self, PlanCommand.self, ApplyCommand.self, DriftCommand.self, ShowCommand.self, ImportCommand.self,
            MigrateCommand.self,
            StateCommand.self,
            SendCommand.self,
            VersionCommand.self,
            CompletionCommand.self,
        ])

    package init() {}

    /// Parses and runs a command line; returns the process exit code. `main` and the end-to-end tests
    /// share this path, so what the tests see is what users get.
    package static func execute(_ arguments: [String]) async -> Int32 {
        do {
            // A clock that cannot be read must not silently become today: it decides deprecation refusals.
            if let text = Console.current.environment["FCMCTL_NOW"], !text.isEmpty, World.parseDay(text) == nil {
                Console.current.say(.error("FCMCTL_NOW='\(text)' is not a date (2027-09-30) or an ISO 8601 time (2027-09-30T12:00:00Z)"))
                return ExitCodes.usage
            }
            var command = try parseAsRoot(arguments)
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
            return ExitCodes.success
        } catch let code as ExitCode {
            return code.rawValue
        } catch let failure as EngineFailure {
            return failure.surfaced().rawValue
        } catch {
            let code = exitCode(for: error)
            let message = fullMessage(for: error)
            if code == .success {
                Console.current.out(message)
            } else if !message.isEmpty {
                Console.current.err(message)
            }
            return code == .validationFailure ? ExitCodes.usage : code.rawValue
        }
    }
}
