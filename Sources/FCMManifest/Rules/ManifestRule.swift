import FCMCore

/// What a rule sees: the manifest as written and its members resolved.
struct RuleContext {
    let manifest: Manifest
    let resolution: Resolution
}

/// One validation rule. Each lives in its own file with its own tests.
protocol ManifestRule {
    static func check(_ context: RuleContext) -> [Diagnostic]
}

enum ManifestRules {
    static func check(_ context: RuleContext) -> [Diagnostic] {
        let rules: [any ManifestRule.Type] = [
            ProjectRule.self,
            GroupMemberLimitRule.self,
            TopicNameRule.self,
            RegistrationFormatRule.self,
            FIDShapeRule.self,
            DuplicateMemberRule.self,
            DuplicateRegistrationRule.self,
            TopicsPerRegistrationRule.self,
            ControlCharacterRule.self,
            SelectorRule.self,
            ProtectRule.self,
        ]
        return rules.flatMap { $0.check(context) }
    }
}

extension Manifest {
    /// Every member list with the address of its owner, in a stable order.
    var memberLists: [(address: String, members: [MemberReference])] {
        groups.values.sorted { $0.name < $1.name }.map { ("\(Address.group($0.name))", $0.members) }
            + topics.values.sorted { $0.name < $1.name }.flatMap {
                [("\(Address.topic($0.name))", $0.members), ("\(Address.topic($0.name)) exclude", $0.exclude)]
            }
    }
}
