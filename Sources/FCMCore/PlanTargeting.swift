/// `--target ADDR` / `--exclude ADDR`: a partial plan, as Terraform's `-target` and OpenTofu's `-exclude`.
/// Addresses: `group/NAME`, `topic/NAME`, `topic/NAME/REGISTRATION` (the registration, or its device name).
package struct PlanTargeting: Sendable, Hashable {
    package var targets: [Address]
    package var excludes: [Address]

    package init(targets: [Address] = [], excludes: [Address] = []) {
        self.targets = targets
        self.excludes = excludes
    }

    package var isPartial: Bool { !targets.isEmpty || !excludes.isEmpty }

    /// Whether `address` names this group, or this topic, or this topic's subscription of `registration`.
    static func matches(_ address: Address, group: String) -> Bool {
        if case .group(let name) = address { return name == group }
        return false
    }

    static func matches(_ address: Address, topic: String, registration: Registration?, names: [Registration: String]) -> Bool {
        switch address {
        case .group: return false
        case .topic(let name): return name == topic
        case .subscription(let name, let who):
            guard name == topic else { return false }
            guard let registration else { return true }
            return registration.value == who || names[registration] == who
        }
    }

    /// The plan cut down to the targets, minus the exclusions. Notes are kept: they are warnings, not changes.
    package func apply(to plan: Plan, deviceNames: [Registration: String] = [:]) -> Plan {
        guard isPartial else { return plan }
        var result = plan
        result.groups = plan.groups.filter { change in
            (targets.isEmpty || targets.contains { Self.matches($0, group: change.name) })
                && !excludes.contains { Self.matches($0, group: change.name) }
        }
        result.topics = plan.topics.compactMap { change in
            func kept(_ registration: Registration) -> Bool {
                (targets.isEmpty || targets.contains { Self.matches($0, topic: change.name, registration: registration, names: deviceNames) })
                    && !excludes.contains { Self.matches($0, topic: change.name, registration: registration, names: deviceNames) }
            }
            var cut = change
            cut.added = change.added.filter(kept)
            cut.removed = change.removed.filter(kept)
            return cut.added.isEmpty && cut.removed.isEmpty ? nil : cut
        }
        return result
    }
}
