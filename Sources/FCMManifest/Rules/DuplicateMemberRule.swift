import FCMCore

/// The same registration twice in one member list (by raw value, or once by device name and once raw) is
/// almost always a copy-paste slip.
enum DuplicateMemberRule: ManifestRule {
    static func check(_ context: RuleContext) -> [Diagnostic] {
        var diagnostics: [Diagnostic] = []
        let resolution = context.resolution
        for (address, members) in context.manifest.memberLists {
            var first: [String: SourceLocation] = [:]
            for member in members {
                let value: String
                switch member {
                case .name(let located): value = resolution.registration(ofDevice: located.value)?.value ?? located.value
                case .explicit(let registration, _): value = registration.value
                }
                if let earlier = first[value] {
                    diagnostics.append(
                        .error("\(address) lists the same registration twice (first at line \(earlier.line)): remove one", at: member.location))
                } else {
                    first[value] = member.location
                }
            }
        }
        return diagnostics
    }
}
