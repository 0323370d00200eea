import FCMCore

package struct ResolvedMember: Sendable {
    package var registration: Registration
    package var location: SourceLocation
    /// The device name the member was written as, if any.
    package var device: String?
}

/// A topic's members: devices by position in `Resolution.devices` (cheap to count and compare at
/// fleet scale: no string hashing), plus registrations written raw.
package struct ResolvedTopicMembers: Sendable {
    package var devices: [UInt32] = []
    package var raw: Set<Registration> = []

    package var count: Int { devices.count + raw.count }
}

/// Manifest members resolved to registrations: device names looked up, selectors evaluated.
package struct Resolution: Sendable {
    /// The manifest's devices in name order: a device's position is its place here.
    package var devices = DeviceTable()
    package var groupMembers: [String: [ResolvedMember]] = [:]
    /// Keyed by normalized topic name.
    package var topicMembers: [String: ResolvedTopicMembers] = [:]
    /// Devices matched by each topic's selector (before include/exclude), by topic name as written.
    package var selectorMatches: [String: Int] = [:]
    package var diagnostics: [Diagnostic] = []

    package func registration(ofDevice name: String) -> Registration? {
        devices.position(of: name).flatMap { devices.registration(at: $0) }
    }

    package func registrations(of members: ResolvedTopicMembers) -> Set<Registration> {
        var set = members.raw
        set.reserveCapacity(members.count)
        for position in members.devices {
            if let registration = devices.registration(at: Int(position)) { set.insert(registration) }
        }
        return set
    }
}

struct ManifestResolver {
    let manifest: Manifest
    let devices: DeviceTable

    init(_ manifest: Manifest) {
        self.manifest = manifest
        devices = manifest.devices.sortedByName()
    }

    /// Raw registrations are told from device names by shape: FIDs, legacy tokens (`instance:APA91b…`) and
    /// anything long. A short word that names no device is almost certainly a misspelt device name.
    static func looksLikeRegistration(_ text: String) -> Bool {
        Registration.looksLikeFID(text) || text.utf8.contains(UInt8(ascii: ":")) || text.utf8.count >= 64
    }

    func resolve() -> Resolution {
        var resolution = Resolution()
        resolution.devices = devices
        for (name, group) in manifest.groups {
            resolution.groupMembers[name] = group.members.compactMap { resolve($0, owner: "\(Address.group(name))", into: &resolution) }
        }
        let selected = evaluate(manifest.topics.compactMap { name, topic in topic.selector.map { (topic: name, selector: $0) } })
        for (name, topic) in manifest.topics {
            var members = ResolvedTopicMembers()
            var positions: [UInt32] = []
            if topic.selector != nil {
                positions = selected[name] ?? []
                resolution.selectorMatches[name] = positions.count
            }
            var extra: [UInt32] = []
            for reference in topic.members {
                guard let member = resolve(reference, owner: "\(Address.topic(name))", into: &resolution) else { continue }
                if let device = member.device, let position = devices.position(of: device) {
                    extra.append(UInt32(position))
                } else {
                    members.raw.insert(member.registration)
                }
            }
            if !extra.isEmpty { positions = Array(Set(positions).union(extra)).sorted() }
            var excluded = Set<UInt32>()
            for reference in topic.exclude {
                guard let member = resolve(reference, owner: "\(Address.topic(name)) exclude", into: &resolution) else { continue }
                if let device = member.device, let position = devices.position(of: device) {
                    excluded.insert(UInt32(position))
                } else {
                    members.raw.remove(member.registration)
                }
            }
            members.devices = excluded.isEmpty ? positions : positions.filter { !excluded.contains($0) }
            resolution.topicMembers[TopicNameRule.normalized(name)] = members
        }
        return resolution
    }

    func resolve(_ reference: MemberReference, owner: String, into resolution: inout Resolution) -> ResolvedMember? {
        switch reference {
        case .explicit(let registration, let location):
            return ResolvedMember(registration: registration, location: location, device: nil)
        case .name(let located):
            if let registration = resolution.registration(ofDevice: located.value) {
                return ResolvedMember(registration: registration, location: located.location, device: located.value)
            }
            // Declared, but its entry did not load (`d1: "token"` for `d1: {token: …}`): that is said once, at the
            // entry, not again as an unknown device at every reference with itself as the suggestion.
            if devices.position(of: located.value) != nil { return nil }
            // Malformed values are reported once, by RegistrationFormatRule, not as unknown devices.
            if Self.looksLikeRegistration(located.value) || Registration.formatProblem(located.value) != nil {
                return ResolvedMember(registration: Registration(inferring: located.value), location: located.location, device: nil)
            }
            var message = "\(owner): unknown device '\(located.value)'"
            if let match = Suggestions.closest(to: located.value, in: Array(devices.names)) {
                message += "; did you mean '\(match)'?"
            } else {
                message += "; declare it under 'devices', or write the registration as {token: …} or {fid: …}"
            }
            resolution.diagnostics.append(.error(message, at: located.location))
            return nil
        }
    }

    /// The devices each selector matches, as sorted positions, by topic name. Each distinct label set is
    /// tried against the selectors once, then one pass over the devices files each under the topics its
    /// label set matched: no per-device copy of anything.
    func evaluate(_ selectors: [(topic: String, selector: LabelSelector)]) -> [String: [UInt32]] {
        guard !selectors.isEmpty else { return [:] }
        let matchedBySet: [[Int]] = devices.labelSets.map { labels in
            selectors.indices.filter { Self.matches(selectors[$0].selector, labels) }
        }
        var positions = [[UInt32]](repeating: [], count: selectors.count)
        if matchedBySet.contains(where: { !$0.isEmpty }) {
            // Counted first, so each topic's list is allocated once at its size (no doubling to a million).
            var sizes = [Int](repeating: 0, count: selectors.count)
            for position in 0..<devices.count {
                for selector in matchedBySet[devices.labelSet(at: position)] { sizes[selector] += 1 }
            }
            for (selector, size) in sizes.enumerated() { positions[selector].reserveCapacity(size) }
            for position in 0..<devices.count {
                for selector in matchedBySet[devices.labelSet(at: position)] { positions[selector].append(UInt32(position)) }
            }
        }
        return Dictionary(uniqueKeysWithValues: zip(selectors.map(\.topic), positions))
    }

    /// Whether labels have every selector label with one of its values; a selector with no labels matches nothing.
    static func matches(_ selector: LabelSelector, _ labels: [String: String]) -> Bool {
        guard !selector.labels.isEmpty else { return false }
        return selector.labels.allSatisfy { key, values in labels[key].map(values.contains) ?? false }
    }
}
