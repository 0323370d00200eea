import FCMCore
import FCMViews
import Foundation
import Testing

@testable import FCMCommands

/// What deletes or removes leads the pull-request Markdown: a banner under the title and the first
/// sections, never counted away by the budget behind thousands of additions (issue 23, item 6).
@Suite struct RemovalsFirstTests {
    typealias Budget = MarkdownBudgetTests

    static let doomed = [Budget.registration(900_001), Budget.registration(900_002), Budget.registration(900_003)]
    static let dropped = Budget.registration(900_004)

    /// 100 topics of 500 new subscriptions (50,000 additions), one group deleted, one subscription removed.
    static func fiftyThousandAdditionsOneDeletionOneRemoval() -> Plan {
        var topics = (0..<100).map { topic in
            TopicChange(
                name: "topic-\(topic)", ownership: .additive, added: (0..<500).map { Budget.registration(topic * 500 + $0) }, removed: [],
                unchanged: 10)
        }
        topics.append(TopicChange(name: "alerts", ownership: .authoritative, added: [], removed: [dropped], unchanged: 9_804))
        let deletion = GroupChange(name: "old-kiosks", action: .delete, steps: [.remove(doomed)], added: [], removed: doomed, unchanged: 0)
        return Plan(groups: [deletion], topics: topics)
    }

    static var labeler: RegistrationLabeler {
        RegistrationLabeler(redactor: Redactor(showTokens: false), deviceNames: [dropped: "kiosk-lobby", doomed[0]: "kiosk-old-1"])
    }

    @Test func aDeletionAndARemovalLeadAFiftyThousandChangePlan() throws {
        let plan = Self.fiftyThousandAdditionsOneDeletionOneRemoval()
        #expect(plan.summary.subscriptionsToAdd == 50_000)
        let markdown = PlanMarkdownRenderer(labeler: Self.labeler, project: "fleet-prod").render(plan)
        #expect(markdown.count <= 60_000)
        #expect(markdown.contains("more objects /"), "the additions overflow the budget, so the test means something")
        #expect(markdown.hasPrefix(PlanMarkdownRenderer.marker + "\n### fcmctl plan · project `fleet-prod`\n\n> [!CAUTION]\n"))

        // The first screen: the banner, before the summary table and before any section.
        let firstScreen = String(markdown.split(separator: "\n", omittingEmptySubsequences: false).prefix(12).joined(separator: "\n"))
        #expect(firstScreen.contains("`group/old-kiosks`: **delete** the group and its notification key (3 members): kiosk-old-1 (fleet-…xxxx)"))
        #expect(firstScreen.contains("`topic/alerts`: **remove** 1 subscription (authoritative): kiosk-lobby (fleet-…xxxx)"))
        #expect(firstScreen.contains("1 group deleted, 3 group members removed, 1 topic subscription removed"))

        // Then their sections, before any addition.
        let firstAddition = try #require(markdown.range(of: "<code>~ topic/topic-"))
        let deletion = try #require(markdown.range(of: "<details open><summary><code>- group/old-kiosks</code> delete +0 −3"))
        let removal = try #require(markdown.range(of: "<details open><summary><code>~ topic/alerts</code> update +0 −1 (9804 unchanged)"))
        #expect(deletion.upperBound < removal.lowerBound && removal.upperBound < firstAddition.lowerBound)
        #expect(markdown.range(of: "#### Deletions and removals")!.lowerBound < deletion.lowerBound)
        #expect(markdown.range(of: "#### Other changes")!.upperBound < firstAddition.lowerBound)
        // Nothing that removes was left out, so the omission line does not say so.
        #expect(!markdown.contains("with deletions or removals"))

        // As GitHub renders it: the banner's names are code, the sections balanced.
        let html = try Budget.renderHTML(markdown)
        let banner = try #require(html.range(of: "</blockquote>"))
        #expect(html[..<banner.lowerBound].contains("<code>group/old-kiosks</code>"))
        #expect(html[..<banner.lowerBound].contains("<code>topic/alerts</code>"))
        #expect(Budget.occurrences("<details", in: html) == Budget.occurrences("</details>", in: html))
        #expect(html.contains("<pre><code class=\"language-diff\">- kiosk-lobby (fleet-…xxxx)"))
    }

    @Test func thousandsOfRemovalsKeepTheBannerWithinItsShare() throws {
        let topics = (0..<5_000).map { topic in
            TopicChange(name: "t\(topic)", ownership: .authoritative, added: [], removed: [Budget.registration(topic)], unchanged: 1)
        }
        for limit in [2_000, 60_000] {
            let markdown = PlanMarkdownRenderer(labeler: Self.labeler, maxChars: limit).render(Plan(topics: topics))
            #expect(markdown.count <= limit)
            let banner = try #require(markdown.components(separatedBy: "\n\n").first { $0.hasPrefix("> [!CAUTION]") })
            #expect(banner.count <= limit / 4)
            #expect(banner.contains("more objects with deletions or removals"))
            #expect(markdown.contains("of them with deletions or removals, named at the top as far as room allowed"))
            #expect(Budget.occurrences("<details", in: markdown) == Budget.occurrences("</details>", in: markdown))
        }
    }

    @Test func removedMembersAreListedBeforeAddedOnesInEveryFormat() {
        let added = (0..<60).map { Budget.registration($0) }
        let removed = Budget.registration(1_000)
        let plan = Plan(topics: [TopicChange(name: "news", ownership: .additive, added: added, removed: [removed], unchanged: 3)])
        let labeler = RegistrationLabeler(redactor: Redactor(showTokens: true), deviceNames: [removed: "gone-kiosk"])
        let markdown = PlanMarkdownRenderer(labeler: labeler).render(plan)
        #expect(markdown.contains("```diff\n- gone-kiosk (\(removed.value))\n+ "))
        #expect(markdown.contains("# … and 11 more"))
        let text = PlanTextRenderer(redactor: Redactor(showTokens: true), deviceNames: [removed: "gone-kiosk"]).render(plan)
        #expect(text[1] == "    − gone-kiosk (\(removed.value))")
        #expect(text.contains("    … and 11 more"))
    }
}
