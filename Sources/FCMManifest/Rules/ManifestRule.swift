import FCMCore

/// One validation rule over a merged manifest. Each lives in its own file with its own tests.
protocol ManifestRule {
    static func check(_ manifest: Manifest) -> [Diagnostic]
}

enum ManifestRules {
    static func check(_ manifest: Manifest) -> [Diagnostic] {
        let rules: [any ManifestRule.Type] = [
        ProjectRule.self,
        GroupMemberLimitRule.self,
        TopicNameRule.self,
        RegistrationFormatRule.self,
            DuplicateMemberRule.self,
        ]
        return rules.flatMap { $0.check(manifest) }
    }
}

extension Manifest {
    /// Every member list with the address of its owner, in a stable order.
    var memberLists: [(address: String, members: [Located<String>])] {
        groups.values.sorted { $0.name < $1.name }.map { ("group/\($0.name)", $0.members) }
            + topics.values.sorted { $0.name < $1.name }.map { ("topic/\($0.name)", $0.members) }
    }
}
