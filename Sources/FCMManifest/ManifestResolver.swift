import FCMCore

package struct ResolvedMember: Sendable {
    package var registration: Registration
    package var location: SourceLocation
    /// The device name the member was written as, if any.
    package var device: String?
}

/// A topic's members: devices by position in `Resolution.deviceNames` (cheap to count and compare at
/// fleet scale: no string hashing), plus registrations written raw.
package struct ResolvedTopicMembers: Sendable {
    package var devices: [Int] = []
    package var raw: Set<Registration> = []

    package var count: Int { devices.count + raw.count }
}

/// Manifest members resolved to registrations: device names looked up, selectors evaluated.
package struct Resolution: Sendable {
    package var deviceNames: [String] = []
    package var devicePositions: [String: Int] = [:]
    package var deviceRegistrations: [Registration?] = []
    package var groupMembers: [String: [ResolvedMember]] = [:]
    /// Keyed by normalized topic name.
    package var topicMembers: [String: ResolvedTopicMembers] = [:]
    /// Devices matched by each topic's selector (before include/exclude), by topic name as written.
    package var selectorMatches: [String: Int] = [:]
    package var diagnostics: [Diagnostic] = []

    package func registration(ofDevice name: String) -> Registration? {
        devicePositions[name].flatMap { deviceRegistrations[$0] }
    }

    package func registrations(of members: ResolvedTopicMembers) -> Set<Registration> {
        var set = members.raw
        set.reserveCapacity(members.count)
        for position in members.devices {
            if let registration = deviceRegistrations[position] { set.insert(registration) }
        }
        return set
    }
}

struct ManifestResolver {
    let manifest: Manifest
    let deviceNames: [String]
    let labelIndex: [String: [String: [Int]]]

    init(_ manifest: Manifest) {
        self.manifest = manifest
        deviceNames = manifest.devices.keys.sorted()
        var index: [String: [String: [Int]]] = [:]
        for (position, name) in deviceNames.enumerated() {
            for (key, value) in manifest.devices[name]!.labels { index[key, default: [:]][value, default: []].append(position) }
        }
        labelIndex = index
    }

    /// Raw registrations are told from device names by shape: FIDs, legacy tokens (`instance:APA91b…`) and
    /// anything long. A short word that names no device is almost certainly a misspelt device name.
    static func looksLikeRegistration(_ text: String) -> Bool {
        Registration.looksLikeFID(text) || text.utf8.contains(UInt8(ascii: ":")) || text.utf8.count >= 64
    }

    func resolve() -> Resolution {
        var resolution = Resolution()
        resolution.deviceNames = deviceNames
        resolution.devicePositions.reserveCapacity(deviceNames.count)
        resolution.deviceRegistrations.reserveCapacity(deviceNames.count)
        for (position, name) in deviceNames.enumerated() {
            let device = manifest.devices[name]!
            resolution.devicePositions[name] = position
            resolution.deviceRegistrations.append(device.registration.map { Registration(value: $0.value, kind: device.kind) })
        }
        for (name, group) in manifest.groups {
            resolution.groupMembers[name] = group.members.compactMap { resolve($0, owner: "\(Address.group(name))", into: &resolution) }
        }
        for (name, topic) in manifest.topics {
            var members = ResolvedTopicMembers()
            var positions: [Int] = []
            if let selector = topic.selector {
                positions = evaluate(selector)
                resolution.selectorMatches[name] = positions.count
            }
            var extra: [Int] = []
            for reference in topic.members {
                guard let member = resolve(reference, owner: "\(Address.topic(name))", into: &resolution) else { continue }
                if let device = member.device, let position = resolution.devicePositions[device] {
                    extra.append(position)
                } else {
                    members.raw.insert(member.registration)
                }
            }
            if !extra.isEmpty { positions = Array(Set(positions).union(extra)).sorted() }
            var excluded = Set<Int>()
            for reference in topic.exclude {
                guard let member = resolve(reference, owner: "\(Address.topic(name)) exclude", into: &resolution) else { continue }
                if let device = member.device, let position = resolution.devicePositions[device] {
                    excluded.insert(position)
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
            // Malformed values are reported once, by RegistrationFormatRule, not as unknown devices.
            if Self.looksLikeRegistration(located.value) || Registration.formatProblem(located.value) != nil {
                return ResolvedMember(registration: Registration(inferring: located.value), location: located.location, device: nil)
            }
            var message = "\(owner): unknown device '\(located.value)'"
            if let match = Suggestions.closest(to: located.value, in: deviceNames) {
                message += "; did you mean '\(match)'?"
            } else {
                message += "; declare it under 'devices', or write the registration as {token: …} or {fid: …}"
            }
            resolution.diagnostics.append(.error(message, at: located.location))
            return nil
        }
    }

    /// Devices having every selector label with one of its values, as sorted positions in `deviceNames`.
    func evaluate(_ selector: LabelSelector) -> [Int] {
        var result: [Int]?
        for (key, values) in selector.labels {
            let byValue = labelIndex[key] ?? [:]
            let matching = values.count == 1 ? (byValue[values[0]] ?? []) : Array(Set(values.flatMap { byValue[$0] ?? [] })).sorted()
            result = result.map { Self.intersect($0, matching) } ?? matching
            if result?.isEmpty == true { return [] }
        }
        return result ?? []
    }

    static func intersect(_ a: [Int], _ b: [Int]) -> [Int] {
        var out: [Int] = []
        var i = 0
        var j = 0
        while i < a.count && j < b.count {
            if a[i] == b[j] {
                out.append(a[i])
                i += 1
                j += 1
            } else if a[i] < b[j] {
                i += 1
            } else {
                j += 1
            }
        }
        return out
    }
}
