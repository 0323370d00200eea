import FCMCore
import FCMManifest

/// `--target` and `--exclude` must name something: a misspelt topic would otherwise plan nothing and exit 0
/// ("No changes"), or exclude nothing. An address matches when the manifests declare the object or the state
/// records it; a subscription's registration part must be a declared device or a registration the topic
/// has (declared or recorded).
package enum TargetCheck {
    package static func check(_ targeting: PlanTargeting, desired: DesiredState, ledger: Ledger) throws {
        guard targeting.isPartial else { return }
        let groups = Set(desired.groups.keys).union(desired.localGroups.keys).union(ledger.knownGroupNames)
        let topics = Set(desired.topics.keys).union(ledger.topics.keys).union(ledger.pending.subscriptions.keys)
        var problems: [Notice] = []
        for (flag, address) in targeting.targets.map({ ("--target", $0) }) + targeting.excludes.map({ ("--exclude", $0) }) {
            switch address {
            case .group(let name) where !groups.contains(name):
                problems.append(
                    .error(
                        "\(flag) \(address) names no group the manifests declare or the state records" + hint(name, in: groups, as: Address.group),
                        about: address))
            case .topic(let name) where !topics.contains(name):
                problems.append(
                    .error(
                        "\(flag) \(address) names no topic the manifests declare or the state records" + hint(name, in: topics, as: Address.topic),
                        about: address))
            case .subscription(let topic, _) where !topics.contains(topic):
                problems.append(
                    .error(
                        "\(flag) \(address.description.prefix(120)) names no topic the manifests declare or the state records"
                            + hint(topic, in: topics, as: Address.topic), about: address))
            case .subscription(let topic, let who):
                let members = (desired.topics[topic]?.members ?? []).union(ledger.topics[topic] ?? [])
                // Names the state keeps too: a device that left the manifest is still excluded by its name.
                let names = desired.deviceNames.merging(ledger.deviceNames) { declared, _ in declared }
                if !members.contains(where: { $0.value == who || names[$0] == who }) {
                    let devices = members.compactMap { names[$0] }
                    problems.append(
                        .error(
                            "\(flag) names no device or registration of \(Address.topic(topic))"
                                + (Suggestions.closest(to: who, in: devices).map { " (did you mean the device '\($0)'?)" } ?? ""), about: address))
                }
            default: break
            }
        }
        guard !problems.isEmpty else { return }
        let last = problems.removeLast()
        problems.append(.error(last.message + ". Nothing was read from FCM or sent", about: last.address))
        throw EngineFailure(notices: problems, code: ExitCodes.usage)
    }

    static func hint(_ name: String, in names: Set<String>, as address: (String) -> Address) -> String {
        Suggestions.closest(to: name, in: names.sorted()).map { " (did you mean \(address($0))?)" } ?? ""
    }
}
