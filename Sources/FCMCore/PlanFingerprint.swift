/// What a plan's operations assume about FCM, per object, as a digest: a group's members (or its absence);
/// for each registration a topic change names, whether it is subscribed to that topic or gone. If any of
/// these moved, the plan is stale. Keyed by the object's address as the plan file writes it.
package enum PlanFingerprint {
    /// `skipping`: registrations left out of every topic's facts (a saved plan's apply does not re-read them:
    /// `UnreadCreates.forSavedPlan`).
    package static func facts(of plan: Plan, observed: ObservedState, skipping: Set<Registration> = []) -> [String: String] {
        var facts: [String: String] = [:]
        for group in plan.groups {
            let members = observed.groups[group.name].map { $0.members.map(\.value).sorted().joined(separator: "\n") } ?? "absent"
            facts[group.address.description] = digest("group\n" + members)
        }
        for topic in plan.topics {
            var lines: [String] = []
            for registration in Set(topic.added + topic.removed).subtracting(skipping).sorted() {
                let state: String
                switch observed.registrations[registration] {
                case .gone?: state = "gone"
                case .active(let topics)?: state = topics.contains(topic.name) ? "subscribed" : "not-subscribed"
                case nil: state = "unknown"
                }
                lines.append("\(registration.kind.rawValue):\(registration.value)\t\(state)")
            }
            facts[topic.address.description] = digest("topic\n" + lines.joined(separator: "\n"))
        }
        return facts
    }

    /// FNV-1a, 128 bits as two 64-bit lanes: no cryptographic claim is made, only change detection.
    package static func digest(_ text: String) -> String {
        var first: UInt64 = 0xcbf2_9ce4_8422_2325
        var second: UInt64 = 0x8422_2325_cbf2_9ce4
        for byte in text.utf8 {
            first = (first ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
            second = (second ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 &+ 1
        }
        return String(first, radix: 16) + String(second, radix: 16)
    }
}
