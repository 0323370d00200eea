import FCMCore

/// The project id addresses the v1 APIs and the sender id the device-group API, so both are required
/// as soon as anything uses them.
enum ProjectRule: ManifestRule {
    static func check(_ context: RuleContext) -> [Diagnostic] {
        let manifest = context.manifest
        let at = manifest.files.first.map { SourceLocation(file: $0, line: 1, column: 1) }
        guard let project = manifest.project else {
            if manifest.groups.isEmpty && manifest.topics.isEmpty { return [] }
            return [.error("the manifest has no 'project' section: add project.id and project.senderId", at: at)]
        }
        var diagnostics: [Diagnostic] = []
        if project.id == nil, !manifest.topics.isEmpty {
            diagnostics.append(.error("project.id is missing: the topic API needs the Firebase project id", at: project.location))
        }
        if project.senderId == nil, !manifest.groups.isEmpty {
            diagnostics.append(.error("project.senderId is missing: the device-group API needs the numeric project number", at: project.location))
        }
        return diagnostics
    }
}
