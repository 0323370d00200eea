import FCMCore

/// "The maximum number of members allowed for a notification key is 20" (device-group docs).
enum GroupMemberLimitRule: ManifestRule {
    static func check(_ context: RuleContext) -> [Diagnostic] {
        context.manifest.groups.values.sorted { $0.name < $1.name }.compactMap { group in
            guard group.members.count > GroupStepPlanner.memberLimit else { return nil }
            return .error(
                "\(Address.group(group.name)) has \(group.members.count) members; FCM allows at most "
                    + "\(GroupStepPlanner.memberLimit) per device group: split it into several groups",
                at: group.membersLocation)
        }
    }
}
