import FCMCore

/// A registration listed twice in one member list is almost always a copy-paste slip.
enum DuplicateMemberRule: ManifestRule {
    static func check(_ manifest: Manifest) -> [Diagnostic] {
        var diagnostics: [Diagnostic] = []
        for (address, members) in manifest.memberLists {
            var first: [String: SourceLocation] = [:]
            for member in members {
                if let earlier = first[member.value] {
                    diagnostics.append(
                        .error("\(address) lists the same registration twice (first at line \(earlier.line)): remove one", at: member.location))
                } else {
                    first[member.value] = member.location
                }
            }
        }
        return diagnostics
    }
}
