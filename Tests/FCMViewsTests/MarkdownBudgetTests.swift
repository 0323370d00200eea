import FCMCore
import FCMViews
import Foundation
import Testing

@testable import FCMCommands

/// The pull-request Markdown, rendered by cmark-gfm (GitHub's own renderer): within budget, balanced, the
/// summary first and the omission line last.
@Suite struct MarkdownBudgetTests {
    static let padding = String(repeating: "x", count: 120)

    static func registration(_ index: Int) -> Registration {
        Registration(value: "fleet-\(index):APA91b" + padding, kind: .token)
    }

    /// 2,000 topics, each subscribing the same fleet of 500: 1,000,000 changes. Built once for the tests that read it.
    static let millionChanges = millionChangePlan()

    static func millionChangePlan() -> Plan {
        let fleet = (0..<500).map(registration)
        let topics = (0..<2_000).map { topic in
            TopicChange(name: "topic-\(topic)", ownership: .additive, added: fleet, removed: [], unchanged: 0)
        }
        return Plan(topics: topics)
    }

    /// GitHub's own renderer (cmark-gfm, from scripts/install-deps.sh --test), with raw HTML kept as GitHub keeps it.
    static func renderHTML(_ markdown: String) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/cmark-gfm")
        process.arguments = ["--unsafe", "-e", "table"]
        let input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        let writer = Thread {
            input.fileHandleForWriting.write(Data(markdown.utf8))
            try? input.fileHandleForWriting.close()
        }
        writer.start()
        let html = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        return String(decoding: html, as: UTF8.self)
    }

    static func occurrences(_ needle: String, in text: String) -> Int { text.components(separatedBy: needle).count - 1 }

    @Test func aMillionChangePlanStaysUnderBudgetWithTheSummaryIntact() throws {
        let plan = Self.millionChanges
        #expect(plan.summary.subscriptionsToAdd == 1_000_000)
        let markdown = PlanMarkdownRenderer(labeler: RegistrationLabeler(redactor: Redactor(showTokens: false))).render(plan)
        #expect(markdown.count <= 60_000)
        #expect(markdown.count > 50_000, "the budget should be used, not wasted: \(markdown.count)")
        #expect(markdown.hasPrefix(PlanMarkdownRenderer.marker + "\n### fcmctl plan\n\n| Action | Objects | Added | Removed |"))
        #expect(markdown.contains("| update | 2000 | 1000000 | 0 |"))
        #expect(markdown.contains(plan.summary.line))
        let lastLine = markdown.split(separator: "\n").last.map(String.init) ?? ""
        let shown = Self.occurrences("<details>", in: markdown)
        #expect(lastLine.hasPrefix("**\(2_000 - shown) more objects / \((2_000 - shown) * 500) more changes not shown**"), "\(lastLine)")
        #expect(Self.occurrences("```diff", in: markdown) == shown)
        #expect(Self.occurrences("\n```\n", in: markdown) == shown)

        let html = try Self.renderHTML(markdown)
        #expect(Self.occurrences("<details>", in: html) == shown)
        #expect(Self.occurrences("</details>", in: html) == shown)
        #expect(html.contains("<table>") && html.contains("<th>Action</th>"))
        #expect(Self.occurrences("<pre><code class=\"language-diff\">", in: html) == shown)
        // Registrations are redacted.
        #expect(!markdown.contains(Self.registration(0).value))
    }

    @Test func aSmallPlanShowsEveryChangeAndNoOmissionLine() throws {
        let plan = Plan(
            groups: [
                GroupChange(
                    name: "family", action: .create, steps: [.create([Self.registration(1)])], added: [Self.registration(1)], removed: [],
                    unchanged: 0)
            ],
            topics: [
                TopicChange(name: "news", ownership: .additive, added: [Self.registration(2)], removed: [Self.registration(3)], unchanged: 4)
            ])
        let labeler = RegistrationLabeler(redactor: Redactor(showTokens: false), deviceNames: [Self.registration(2): "kiosk-2"])
        let markdown = PlanMarkdownRenderer(labeler: labeler).render(plan)
        #expect(!markdown.contains("not shown"))
        #expect(markdown.contains("<code>+ group/family</code> create +1 −0"))
        #expect(markdown.contains("<code>~ topic/news</code> update +1 −1 (4 unchanged)"))
        #expect(markdown.contains("+ kiosk-2 (fleet-…xxxx)"))
        #expect(markdown.contains("- fleet-…xxxx"))
        // The topic removes a subscription: its section comes first, open, under its heading.
        #expect(markdown.contains("#### Deletions and removals\n\n<details open><summary><code>~ topic/news</code>"))
        let html = try Self.renderHTML(markdown)
        #expect(Self.occurrences("<details", in: html) == 2 && Self.occurrences("</details>", in: html) == 2)
        #expect(html.contains("<td>create</td>"))
    }

    /// GitHub counts a comment's characters as code points, and a device named in Hindi or Thai, or with a flag,
    /// has grapheme clusters of two or more: the budget counts code points, so such a plan's comment stays within
    /// it (counted in clusters, this one was 67,243 code points: a comment GitHub refuses).
    @Test func theBudgetCountsCodePointsAsGitHubDoes() throws {
        let names = ["रसोई-टैबलेट", "🇮🇳-काउंटर-कियोस्क", "ห้องครัว-แท็บเล็ต", "🇹🇭-ป้ายหน้าร้าน"]
        let fleet = (0..<30).map(Self.registration)
        var deviceNames: [Registration: String] = [:]
        for (index, registration) in fleet.enumerated() { deviceNames[registration] = "\(names[index % names.count])-\(index)" }
        let topics = (0..<2_000).map { TopicChange(name: "topic-\($0)", ownership: .additive, added: fleet, removed: [], unchanged: 0) }
        let labeler = RegistrationLabeler(redactor: Redactor(showTokens: false), deviceNames: deviceNames)
        let markdown = PlanMarkdownRenderer(labeler: labeler).render(Plan(topics: topics))
        #expect(markdown.unicodeScalars.count <= 60_000)
        #expect(markdown.unicodeScalars.count > 55_000, "the budget should be used, not wasted")
        #expect(markdown.count < markdown.unicodeScalars.count - 5_000, "the names must make clusters and code points differ")
        #expect(markdown.hasSuffix("for all of them.\n"))
        let html = try Self.renderHTML(markdown)
        #expect(Self.occurrences("<details>", in: html) == Self.occurrences("</details>", in: html))
    }

    @Test func theBudgetIsHonouredAtEverySizeAndNeverCutsASection() throws {
        let plan = Self.millionChanges
        for limit in [2_000, 10_000, 65_536] {
            let markdown = PlanMarkdownRenderer(labeler: RegistrationLabeler(redactor: Redactor(showTokens: false)), maxChars: limit).render(plan)
            #expect(markdown.count <= limit)
            #expect(Self.occurrences("<details>", in: markdown) == Self.occurrences("</details>", in: markdown))
            #expect(markdown.hasSuffix("for all of them.\n"))
        }
    }
}
