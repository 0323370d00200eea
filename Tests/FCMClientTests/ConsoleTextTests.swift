import FCMClient
import Testing

@Suite struct ConsoleTextTests {
    @Test func serverTextCannotStartWorkflowCommandsOrDriveTheTerminal() {
        let hostile = "bad\n::error file=x::forged\r\n::add-mask::\u{1B}[2J\u{07}done\u{202E}"
        let safe = ConsoleText.oneLine(hostile)
        #expect(safe == #"bad\n::error file=x::forged\r\n::add-mask::\u{1B}[2J\u{7}done\u{202E}"#)
        #expect(!safe.unicodeScalars.contains { $0.properties.generalCategory == .control })
        #expect(ConsoleText.oneLine("::warning::x") == ": :warning::x")
        #expect(ConsoleText.oneLine("Requested entity was not found.") == "Requested entity was not found.")
    }
}
