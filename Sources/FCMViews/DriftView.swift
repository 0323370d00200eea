import FCMCore

/// A drift report in every format: per category its count, the objects and the suggestion.
package struct DriftView {
    package static let marker = "<!-- fcmctl:drift -->"

    package let report: DriftReport
    package let labeler: RegistrationLabeler
    package var maxMembers = 50
    package var notices: [DeprecationNotice] = []
    /// The Firebase project drift read, in the Markdown title and the JSON.
    package var project: String?
    /// Registrations FCM would not tell about: while any is left, no drift found is not "FCM matches".
    package var unreadable = 0

    package init(report: DriftReport, labeler: RegistrationLabeler, maxMembers: Int = 50, notices: [DeprecationNotice] = [], project: String? = nil) {
        self.maxMembers = maxMembers
        self.report = report
        self.labeler = labeler
        self.notices = notices
        self.project = project
    }

    var noDriftLine: String {
        unreadable == 0
            ? "No drift. FCM matches the manifest and fcmctl's records."
            : "No drift in what was read, but \(plural(unreadable, "registration")) could not be read: FCM may still differ."
    }

    package var categories: [(DriftReport.Category, [DriftReport.Finding])] {
        DriftReport.Category.allCases.map { ($0, report.findings(in: $0)) }
    }

    /// "group/NAME: its members (…)", the same words in every format.
    static func line(_ fact: DriftReport.MembersFromState) -> String {
        "\(Address.group(fact.group)): its members (FCM documents no way to list them; fcmctl compared the \(fact.recorded) it recorded)"
    }

    package static func count(_ findings: [DriftReport.Finding]) -> Int { findings.reduce(0) { $0 + max(1, $1.registrations.count) } }

    /// Said whatever the findings: a reader must know what a clean report could not check.
    package var notReadLines: [String] {
        report.notReadFromFCM.isEmpty ? [] : ["Not read from FCM:"] + report.notReadFromFCM.map { "  - \(Self.line($0))" }
    }

    package func text(palette: Palette) -> [String] {
        guard report.hasDrift else { return [noDriftLine] + notReadLines }
        var lines: [String] = notReadLines
        for (category, findings) in categories where !findings.isEmpty {
            lines.append(palette.bold("\(category.title): \(Self.count(findings))") + " (\(category.rawValue))")
            for finding in findings {
                lines.append(palette.yellow("  ~ \(finding.address)") + "  \(finding.detail)")
                let shown = finding.registrations.prefix(maxMembers)
                lines += shown.map { "      \(labeler.label($0))" }
                if finding.registrations.count > shown.count { lines.append("      … and \(finding.registrations.count - shown.count) more") }
            }
            lines.append("  → \(category.suggestion)")
        }
        let total = categories.filter { !$0.1.isEmpty }
        lines.append("")
        lines.append(
            "Drift: \(total.map { "\(Self.count($0.1)) \($0.0.rawValue)" }.joined(separator: ", ")). Nothing was changed.")
        return lines
    }

    package func json() -> JSONTree {
        let redactor = labeler.redactor
        return .object(
            DocumentJSON.header(kind: "drift") + [("project", .optional(project))] + [
                ("has_drift", .bool(report.hasDrift)), ("deprecations", DocumentJSON.deprecations(notices)),
                ("not_read_from_fcm", .array(report.notReadFromFCM.map { .string(Self.line($0)) })),
                (
                    "categories",
                    .array(
                        categories.map { category, findings in
                            .object([
                                ("id", .string(category.rawValue)), ("title", .string(category.title)), ("count", .int(Self.count(findings))),
                                ("suggestion", .string(category.suggestion)),
                                (
                                    "objects",
                                    .array(
                                        findings.map { object($0, redactor: redactor) })
                                ),
                            ])
                        })
                ),
            ])
    }

    package func object(_ finding: DriftReport.Finding, redactor: Redactor) -> JSONTree {
        var fields: [(String, JSONTree)] = [
            ("address", .string(finding.address.description)), ("action", .string(finding.action.rawValue)),
            ("count", .int(finding.registrations.count)),
            ("detail", .string(finding.detail)), ("registrations", DocumentJSON.registrations(finding.registrations, redactor)),
        ]
        if let names = DocumentJSON.devices(finding.registrations, labeler) { fields.append(("devices", names)) }
        return .object(fields)
    }

    package func markdown(maxChars: Int) -> String {
        var budget = MarkdownBudget(limit: maxChars)
        var head = "\(Self.marker)\n### fcmctl drift" + (project.map { " · project \(MarkdownText.code($0))" } ?? "") + "\n\n"
        for notice in notices { head += "- ⚠️ \(MarkdownText.inline(notice.message))\n" }
        if !notices.isEmpty { head += "\n" }
        for fact in report.notReadFromFCM { head += "- ℹ️ Not read from FCM: \(MarkdownText.inline(Self.line(fact)))\n" }
        if !report.notReadFromFCM.isEmpty { head += "\n" }
        if !report.hasDrift {
            head += unreadable == 0 ? "**No drift.** FCM matches the manifest and fcmctl's records.\n" : "**\(MarkdownText.inline(noDriftLine))**\n"
            budget.head(head)
            return budget.finish(noun: "object", hint: "")
        }
        head += "| Category | Count | What to do |\n|---|---:|---|\n"
        for (category, findings) in categories where !findings.isEmpty {
            head += "| \(category.title) (`\(category.rawValue)`) | \(Self.count(findings)) | \(MarkdownText.inline(category.suggestion)) |\n"
        }
        budget.head(head + "\n")
        for (category, findings) in categories {
            for finding in findings.sorted(by: { $0.registrations.count > $1.registrations.count }) {
                var block =
                    "<details><summary><code>\(MarkdownText.html(finding.address.description))</code> \(category.rawValue): "
                    + "\(MarkdownText.html(finding.detail))</summary>\n\n"
                if !finding.registrations.isEmpty {
                    var lines = finding.registrations.prefix(maxMembers).map(labeler.label)
                    if finding.registrations.count > maxMembers { lines.append("… and \(finding.registrations.count - maxMembers) more") }
                    block += MarkdownText.fencedBlock(lines) + "\n"
                }
                budget.add(block + "</details>\n\n", changes: max(1, finding.registrations.count))
            }
        }
        return budget.finish(noun: "object", hint: "Run `fcmctl drift` locally, or read its JSON, for all of them.")
    }

    /// One annotation per category, at the topic's or group's declaration when the manifest has one.
    package func annotations(desired: DesiredState) -> [Diagnostic] {
        categories.filter { !$0.1.isEmpty }.map { category, findings in
            let location: SourceLocation? =
                switch findings[0].address {
                case .group(let name): desired.groups[name]?.location
                case .topic(let name), .subscription(let name, _): desired.topics[name]?.location
                }
            return .warning(
                "drift: \(category.title.lowercased()): \(Self.count(findings)) (\(findings.map(\.address.description).prefix(5).joined(separator: ", "))"
                    + (findings.count > 5 ? ", …" : "") + "); \(category.suggestion)", at: location)
        }
    }
}
