import FCMCore

package struct ResolvedMember: Sendable {
    package var registration: Registration
    package var location: SourceLocation
    /// The device name the member was written as, if any.
    package var device: String?
}

/// Manifest members resolved to registrations: device names looked up, selectors evaluated.
package struct Resolution: Sendable {
    package var devices: [String: Registration] = [:]
    package var groupMembers: [String: [ResolvedMember]] = [:]
    package var topicMembers: [String: Set<Registration>] = [:]
    /// Devices matched by each topic's selector (before include/exclude).
    package var selectorMatches: [String: Int] = [:]
    package var diagnostics: [Diagnostic] = []
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
        for (name, device) in manifest.devices {
            if let registration = device.registration {
                resolution.devices[name] = Registration(value: registration.value, kind: device.kind)
            }
        }
        for (name, group) in manifest.groups {
            resolution.groupMembers[name] = group.members.compactMap { resolve($0, owner: "group/\(name)", into: &resolution) }
        }
        for (name, topic) in manifest.topics {
            var members = Set<Registration>()
            if let selector = topic.selector {
                let matched = evaluate(selector)
                resolution.selectorMatches[name] = matched.count
                for position in matched {
                    if let registration = resolution.devices[deviceNames[position]] { members.insert(registration) }
                }
            }
            for reference in topic.members {
                if let member = resolve(reference, owner: "topic/\(name)", into: &resolution) { members.insert(member.registration) }
            }
            for reference in topic.exclude {
                if let member = resolve(reference, owner: "topic/\(name) exclude", into: &resolution) { members.remove(member.registration) }
            }
            resolution.topicMembers[TopicNameRule.normalized(name)] = members
        }
        return resolution
    }

    func resolve(_ reference: MemberReference, owner: String, into resolution: inout Resolution) -> ResolvedMember? {
        switch reference {
        case .explicit(let registration, let location):
            return ResolvedMember(registration: registration, location: location, device: nil)
        case .name(let located):
            if let registration = resolution.devices[located.value] {
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
        var i = 0, j = 0
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
