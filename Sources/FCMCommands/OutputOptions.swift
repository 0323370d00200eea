import ArgumentParser
import FCMViews
import Foundation

/// How a command's result is shown: the format, its budgets, a JSON copy on the side, colour.
struct OutputOptions: ParsableArguments {
    @Option(help: "text (people), json (machines), markdown (a pull-request comment), or github (annotations and the step summary).")
    var format: OutputFormat = .text

    @Option(help: ArgumentHelp("Also write the JSON document to FILE, whatever --format shows.", valueName: "file"))
    var jsonInto: String?

    @Option(
        help:
            "Markdown budget in characters, counted as GitHub counts them (Unicode code points; it refuses comments over 65,536); what does not fit is counted, never cut mid-section."
    )
    var maxChars = MarkdownBudget.defaultLimit

    @Option(help: "Members listed per object in text and Markdown before the rest are counted.")
    var maxMembers = 50

    @Option(help: "Colour the text output: auto (only on a terminal, and not when NO_COLOR is set), always, or never.")
    var color: ColorChoice = .auto

    func validate() throws {
        guard maxChars >= 2_000 else { throw ValidationError("--max-chars must be at least 2000") }
        guard maxMembers >= 0 else { throw ValidationError("--max-members must not be negative") }
    }

    init() {}

    /// The palette for stdout: colour on a terminal only, never with NO_COLOR (https://no-color.org), never in
    /// a format other than text.
    func palette(console: Console) -> Palette {
        guard format == .text else { return .plain }
        switch color {
        case .never: return .plain
        case .always: return .ansi
        case .auto:
            let noColor = !(console.environment["NO_COLOR"] ?? "").isEmpty
            let dumb = console.environment["TERM"] == "dumb"
            return console.stdoutIsTerminal && !noColor && !dumb ? .ansi : .plain
        }
    }
}
