import ArgumentParser
import FCMViews

/// Reports a failure to the user and returns the exit code to throw: the message is printed once, here.
package func fail(_ message: String, code: Int32 = ExitCodes.error) -> ExitCode {
    Console.current.err("error: \(message)")
    return ExitCode(code)
}
