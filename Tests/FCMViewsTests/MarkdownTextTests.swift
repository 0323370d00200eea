import FCMCore
import FCMViews
import Foundation
import Testing

@testable import FCMCommands

/// Names with backticks (group and device names are free text) render as written on GitHub: checked through
/// cmark-gfm, GitHub's renderer, not by reading the Markdown.
@Suite struct MarkdownTextTests {
    typealias Budget = MarkdownBudgetTests

    @Test(arguments: [
        ("plain", "`plain`"), ("a`b", "``a`b``"), ("`lead", "`` `lead ``"), ("trail`", "`` trail` ``"), ("x``y", "```x``y```"),
        ("``", "``` `` ```"), (" both ", "`  both  `"),
    ])
    func codeSpansUseALongerFence(text: String, expected: String) throws {
        #expect(MarkdownText.code(text) == expected)
        let html = try Budget.renderHTML(MarkdownText.code(text) + "\n")
        #expect(html == "<p><code>\(Self.escaped(text))</code></p>\n", "\(html)")
    }

    @Test func fencedBlocksOutlastAnyBacktickRunInside() throws {
        let lines = ["```", "- ````dev````", "+ plain"]
        let block = MarkdownText.fencedBlock(lines, info: "diff")
        #expect(block.hasPrefix("`````diff\n") && block.hasSuffix("\n`````\n"))
        let html = try Budget.renderHTML(block)
        #expect(html == "<pre><code class=\"language-diff\">```\n- ````dev````\n+ plain\n</code></pre>\n", "\(html)")
    }

    @Test func aPlanWithBackticksInGroupAndDeviceNamesRendersThemLiterally() throws {
        let device = Registration(value: "tick:APA91b" + String(repeating: "t", count: 40), kind: .token)
        let plan = Plan(
            groups: [GroupChange(name: "we`ird", action: .delete, steps: [.remove([device])], added: [], removed: [device], unchanged: 0)])
        let labeler = RegistrationLabeler(redactor: Redactor(showTokens: false), deviceNames: [device: "``dev`ice"])
        let markdown = PlanMarkdownRenderer(labeler: labeler, project: "p`q").render(plan)
        let html = try Budget.renderHTML(markdown)
        #expect(html.contains("<h3>fcmctl plan · project <code>p`q</code></h3>"), "\(html)")
        #expect(html.contains("<code>group/we`ird</code>: <strong>delete</strong>"), "\(html)")
        // Raw HTML passes through: the entity is a backtick in the browser.
        #expect(html.contains("<summary><code>- group/we&#96;ird</code> delete +0 −1</summary>"), "\(html)")
        #expect(html.contains("- ``dev`ice (tick:A…tttt)\n</code></pre>"), "\(html)")
        // In running text a name keeps its backticks as text, not as a code span.
        #expect(html.contains("``dev`ice (tick:A…tttt)"))
        #expect(!html.contains("\\`"), "a backslash before a backtick would show on GitHub")
    }

    /// cmark-gfm's escaping of code text.
    static func escaped(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(of: ">", with: "&gt;")
    }
}
