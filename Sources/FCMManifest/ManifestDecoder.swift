import FCMCore

/// Turns one file's YAML tree into a `Manifest`, reporting every type or key problem it meets.
struct ManifestDecoder {
    static let topLevelKeys = ["apiVersion", "project", "groups", "topics"]
    static let projectKeys = ["id", "senderId"]
    static let groupKeys = ["members", "protect"]
    static let topicKeys = ["members", "ownership", "protect"]
    static let apiVersion = "fcmctl/v1"

    var diagnostics: [Diagnostic] = []

    mutating func decode(_ root: YAMLNode) -> Manifest {
        var manifest = Manifest()
        manifest.files = [root.location.file]
        guard let pairs = mapping(root, what: "the top level of a manifest") else { return manifest }
        for pair in pairs {
            guard let key = pair.key.scalar else { continue }
            switch key {
            case "apiVersion":
                if let version = string(pair.value, what: "apiVersion"), version != Self.apiVersion {
                    diagnostics.append(.error("unsupported apiVersion '\(version)'; this fcmctl reads '\(Self.apiVersion)'", at: pair.value.location))
                }
            case "project": manifest.project = project(pair.value)
            case "groups": manifest.groups = groups(pair.value)
            case "topics": manifest.topics = topics(pair.value)
            default: unknownKey(pair.key, key, known: Self.topLevelKeys, in: "the top level")
            }
        }
        return manifest
    }

    mutating func unknownKey(_ node: YAMLNode, _ key: String, known: [String], in place: String) {
        diagnostics.append(.error("unknown key '\(key)' in \(place)" + Suggestions.hint(for: key, in: known), at: node.location))
    }

    mutating func mapping(_ node: YAMLNode, what: String) -> [YAMLPair]? {
        if case .mapping(let pairs) = node.value { return pairs }
        if node.isNull { return [] }
        diagnostics.append(.error("\(what) must be a mapping, found \(node.kindName)", at: node.location))
        return nil
    }

    mutating func string(_ node: YAMLNode, what: String) -> String? {
        if case .scalar(let text, _) = node.value, !node.isNull { return text }
        diagnostics.append(.error("\(what) must be a string, found \(node.isNull ? "nothing" : node.kindName)", at: node.location))
        return nil
    }

    mutating func bool(_ node: YAMLNode, what: String) -> Bool {
        if case .scalar(let text, let plain) = node.value, plain, text == "true" || text == "false" { return text == "true" }
        diagnostics.append(.error("\(what) must be true or false, found \(node.scalar.map { "'\($0)'" } ?? node.kindName)", at: node.location))
        return false
    }

    mutating func project(_ node: YAMLNode) -> ManifestProject? {
        guard let pairs = mapping(node, what: "project") else { return nil }
        var project = ManifestProject(location: node.location)
        for pair in pairs {
            guard let key = pair.key.scalar else { continue }
            switch key {
            case "id":
                if let id = string(pair.value, what: "project.id") { project.id = Located(id, at: pair.value.location) }
            case "senderId":
                if let sender = string(pair.value, what: "project.senderId") {
                    if sender.isEmpty || !sender.allSatisfy(\.isASCIIDigitCharacter) {
                        diagnostics.append(.error("project.senderId must be the numeric project number (e.g. \"123456789012\"), found '\(sender)'", at: pair.value.location))
                    }
                    project.senderId = Located(sender, at: pair.value.location)
                }
            default: unknownKey(pair.key, key, known: Self.projectKeys, in: "project")
            }
        }
        return project
    }

    mutating func members(_ node: YAMLNode, owner: String) -> [Located<String>] {
        if node.isNull { return [] }
        guard case .sequence(let items) = node.value else {
            diagnostics.append(.error("\(owner) members must be a list of registrations, found \(node.kindName)", at: node.location))
            return []
        }
        var members: [Located<String>] = []
        for item in items {
            guard case .scalar(let text, _) = item.value, !item.isNull else {
                diagnostics.append(.error("\(owner): each member must be a registration string, found \(item.isNull ? "nothing" : item.kindName)", at: item.location))
                continue
            }
            members.append(Located(text, at: item.location))
        }
        return members
    }

    mutating func groups(_ node: YAMLNode) -> [String: ManifestGroup] {
        guard let pairs = mapping(node, what: "groups") else { return [:] }
        var groups: [String: ManifestGroup] = [:]
        for pair in pairs {
            guard let name = pair.key.scalar else { continue }
            var group = ManifestGroup(name: name, members: [], membersLocation: pair.value.location, protect: false, location: pair.key.location)
            if case .sequence = pair.value.value {
                group.members = members(pair.value, owner: "group/\(name)")
            } else if let fields = mapping(pair.value, what: "group/\(name)") {
                for field in fields {
                    guard let key = field.key.scalar else { continue }
                    switch key {
                    case "members":
                        group.members = members(field.value, owner: "group/\(name)")
                        group.membersLocation = field.value.location
                    case "protect": group.protect = bool(field.value, what: "group/\(name) protect")
                    default: unknownKey(field.key, key, known: Self.groupKeys, in: "group/\(name)")
                    }
                }
            }
            groups[name] = group
        }
        return groups
    }

    mutating func topics(_ node: YAMLNode) -> [String: ManifestTopic] {
        guard let pairs = mapping(node, what: "topics") else { return [:] }
        var topics: [String: ManifestTopic] = [:]
        for pair in pairs {
            guard let name = pair.key.scalar else { continue }
            var topic = ManifestTopic(
                name: name, members: [], membersLocation: pair.value.location, ownership: .additive, protect: false,
                location: pair.key.location)
            if case .sequence = pair.value.value {
                topic.members = members(pair.value, owner: "topic/\(name)")
            } else if let fields = mapping(pair.value, what: "topic/\(name)") {
                for field in fields {
                    guard let key = field.key.scalar else { continue }
                    switch key {
                    case "members":
                        topic.members = members(field.value, owner: "topic/\(name)")
                        topic.membersLocation = field.value.location
                    case "protect": topic.protect = bool(field.value, what: "topic/\(name) protect")
                    case "ownership":
                        if let text = string(field.value, what: "topic/\(name) ownership") {
                            if let ownership = Ownership(rawValue: text) {
                                topic.ownership = ownership
                            } else {
                                let known = Ownership.allCases.map(\.rawValue)
                                diagnostics.append(.error("unknown ownership '\(text)' for topic/\(name)" + Suggestions.hint(for: text, in: known), at: field.value.location))
                            }
                        }
                    default: unknownKey(field.key, key, known: Self.topicKeys, in: "topic/\(name)")
                    }
                }
            }
            topics[name] = topic
        }
        return topics
    }
}

extension Character {
    var isASCIIDigitCharacter: Bool { isASCII && isNumber }
}
