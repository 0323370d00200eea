package enum OutputFormat: String, CaseIterable, Sendable {
    case text
    case json
    /// For a pull-request comment or an issue body: a summary, then a collapsible section per object.
    case markdown
    /// Workflow annotations on stdout, and the Markdown summary appended to `$GITHUB_STEP_SUMMARY`.
    case github
}

package enum ColorChoice: String, CaseIterable, Sendable {
    case auto
    case always
    case never
}
