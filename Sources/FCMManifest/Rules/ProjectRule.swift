import FCMCore

/// The sender id addresses the device-group API and has no other source, so groups require it. The
/// project id may also come from GOOGLE_CLOUD_PROJECT or the key file, so it is checked at plan time.
enum ProjectRule: ManifestRule {
    static func check(_ context: RuleContext) -> [Diagnostic] {
        let manifest = context.manifest
        let at = manifest.files.first.map { SourceLocation(file: $0, line: 1, column: 1) }
        guard let project = manifest.project else {
            if manifest.groups.isEmpty && manifest.topics.isEmpty { return [] }
            if manifest.groups.isEmpty { return [] }  // topics alone can take the project id from the environment
            return [.error("the manifest has no 'project' section: add project.senderId (and project.id)", at: at)]
        }
        var diagnostics: [Diagnostic] = []
        if project.senderId == nil, !manifest.groups.isEmpty {
            diagnostics.append(.error("project.senderId is missing: the device-group API needs the numeric project number", at: project.location))
        }
        return diagnostics
    }
}
