/// Assembles a Markdown document from whole blocks under a character budget. A block (a `<details>`
/// section with its fence) is added whole or not at all, so the document never ends inside a fence or an
/// open `<details>`; what did not fit is counted for the omission line.
///
/// Characters are counted as GitHub counts a comment's: Unicode code points (`unicodeScalars`), not Swift's
/// grapheme clusters. A device named in Hindi or Thai, or with a flag, has clusters of 2 or more code points:
/// 59,602 clusters of such a plan are 66,783 code points, a comment GitHub refuses (Tests/cli/test_comment_size.py).
/// A code point is at most 4 UTF-8 bytes, so the document is also at most 4 × the limit in bytes.
package struct MarkdownBudget {
    /// GitHub refuses a comment over 65,536 characters; the default leaves room for a workflow's own words.
    package static let defaultLimit = 60_000
    /// `$GITHUB_STEP_SUMMARY` takes up to 1 MiB per step.
    package static let stepSummaryLimit = 1_000_000

    package let limit: Int
    /// Kept free for the omission line, whatever is added before it.
    package let reserve = 400
    private(set) var text = ""
    /// Code points in `text`, kept as it grows: counting walks the whole string.
    private(set) var length = 0
    private(set) var omittedBlocks = 0
    private(set) var omittedChanges = 0
    /// Of the omitted blocks, those that delete or remove: the omission line names them apart.
    private(set) var omittedRemovalBlocks = 0
    private var closed = false

    package init(limit: Int) { self.limit = limit }

    /// Text that must appear (the summary); counted against the budget like the rest.
    package mutating func head(_ block: String) {
        text += block
        length += Self.size(block)
    }

    /// Adds `block` if it fits; otherwise counts it (and every later block) as omitted. `removes` marks a
    /// block that deletes or removes something, counted apart in the omission line. Blocks after the first
    /// that did not fit are never rendered: a plan of thousands of objects shows only the first few.
    @discardableResult
    package mutating func add(_ render: @autoclosure () -> String, changes: Int, removes: Bool = false) -> Bool {
        if !closed {
            let block = render()
            let size = Self.size(block)
            guard length + size + reserve > limit else {
                text += block
                length += size
                return true
            }
        }
        closed = true
        omittedBlocks += 1
        omittedChanges += changes
        if removes { omittedRemovalBlocks += 1 }
        return false
    }

    /// What GitHub counts of `text`: its code points.
    package static func size(_ text: String) -> Int { text.unicodeScalars.count }

    /// The document, ending with the omission line when anything was left out.
    package func finish(noun: String, hint: String) -> String {
        guard omittedBlocks > 0 else { return text }
        return text
            + "\n**\(omittedBlocks) more \(omittedBlocks == 1 ? noun : noun + "s") / \(omittedChanges) more change\(omittedChanges == 1 ? "" : "s") not shown** "
            + (omittedRemovalBlocks > 0
                ? "(\(omittedRemovalBlocks) of them with deletions or removals, named at the top as far as room allowed) " : "")
            + "(the \(limit)-character budget). \(hint)\n"
    }
}
