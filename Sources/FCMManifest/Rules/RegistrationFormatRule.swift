import FCMCore

/// Only the checks FCM's own docs support: tokens have no published format, so no regex (wire reference §7).
enum RegistrationFormatRule: ManifestRule {
    static func check(_ manifest: Manifest) -> [Diagnostic] {
        manifest.memberLists.flatMap { address, members in
            members.compactMap { member in
                Registration.formatProblem(member.value).map { .error("\(address): \($0)", at: member.location) }
            }
        }
    }
}
