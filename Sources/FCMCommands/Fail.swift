import ArgumentParser
import FCMCore
import FCMEngine
import FCMViews

/// Reports a failure to the user and returns the exit code to throw: the failure is said once, here.
func fail(_ message: String, about address: Address? = nil, code: Int32 = ExitCodes.error) -> ExitCode {
    Console.current.say(.error(message, about: address))
    return ExitCode(code)
}

extension EngineFailure {
    /// The failure said (when it has something to say), as the exit code to throw.
    func surfaced() -> ExitCode {
        let console = Console.current
        for notice in notices { console.say(notice) }
        return ExitCode(code)
    }
}

/// Runs engine work from a command: an engine failure is said where it happens, like `fail`.
func surfacing<T>(_ body: () async throws -> T) async throws -> T {
    do {
        return try await body()
    } catch let failure as EngineFailure {
        throw failure.surfaced()
    }
}

/// `surfacing` for work that does not wait.
func surfacingNow<T>(_ body: () throws -> T) throws -> T {
    do {
        return try body()
    } catch let failure as EngineFailure {
        throw failure.surfaced()
    }
}
