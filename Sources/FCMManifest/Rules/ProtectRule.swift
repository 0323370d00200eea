import FCMCore

/// `protect: true` promises fcmctl will never delete the object; declaring it empty asks for exactly that.
enum ProtectRule: ManifestRule {
    static func check(_ context: RuleContext) -> [Diagnostic] {
        let defaultProtect = context.manifest.defaults?.protect?.value ?? false
        var diagnostics: [Diagnostic] = []
        for group in context.manifest.groups.values.sorted(by: { $0.name < $1.name }) {
            guard group.protect?.value ?? defaultProtect, group.members.isEmpty else { continue }
            diagnostics.append(
                .error(
                    "\(Address.group(group.name)) is protected but declares no members, which would delete it: add members or remove 'protect'",
                    at: group.protect?.location ?? group.location))
        }
        for topic in context.manifest.topics.values.sorted(by: { $0.name < $1.name }) {
            let ownership = topic.ownership?.value ?? context.manifest.defaults?.ownership?.value ?? .additive
            guard topic.protect?.value ?? defaultProtect, ownership == .authoritative,
                (context.resolution.topicMembers[TopicNameRule.normalized(topic.name)]?.count ?? 0) == 0
            else { continue }
            diagnostics.append(
                .error(
                    "\(Address.topic(topic.name)) is protected but, authoritative and empty, would lose every known subscriber: add members or remove 'protect'",
                    at: topic.protect?.location ?? topic.location))
        }
        return diagnostics
    }
}
