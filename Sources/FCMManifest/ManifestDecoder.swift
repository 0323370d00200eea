import FCMCore

/// Turns one file's YAML tree into a `Manifest`, reporting every type or key problem it meets.
struct ManifestDecoder {
    var diagnostics: [Diagnostic] = []
    /// The top level's devices, when the reader read them as they streamed by.
    var streamedDevices: StreamedDevices?

    init(streamedDevices: StreamedDevices? = nil) {
        self.streamedDevices = streamedDevices
    }

    mutating func decode(_ root: YAMLNode) -> Manifest {
        var manifest = Manifest()
        manifest.files = [root.location.file]
        for (key, keyNode, value) in fields(root, of: "the top level of a manifest", known: ManifestSchema.topLevel) {
            switch key {
            case "apiVersion":
                if let version = string(value, what: "apiVersion"), version != ManifestSchema.apiVersion {
                    error("unsupported apiVersion '\(version)'; this fcmctl reads '\(ManifestSchema.apiVersion)'", at: value)
                }
            case "include": manifest.includes = includes(value)
            case "project": manifest.project = project(value, at: keyNode.location)
            case "state": manifest.state = state(value, at: keyNode.location)
            case "defaults": manifest.defaults = defaults(value, at: keyNode.location)
            case "devices":
                if let streamed = streamedDevices, streamed.whole {
                    manifest.devices = Self.table(streamed.decoded, order: streamed.order)
                } else {
                    manifest.devices = devices(value, streamed: streamedDevices?.decoded ?? [])
                }
            case "deviceFiles": manifest.deviceFiles = deviceFiles(value)
            case "groups": manifest.groups = named(value, what: "groups") { $0.group($1, $2, at: $3) }
            default: manifest.topics = named(value, what: "topics") { $0.topic($1, $2, at: $3) }
            }
        }
        return manifest
    }

    // MARK: Sections

    mutating func project(_ node: YAMLNode, at location: SourceLocation) -> ManifestProject {
        var project = ManifestProject(location: location)
        for (key, _, value) in fields(node, of: "project", known: ManifestSchema.project) {
            switch key {
            case "id": project.id = located(string(value, what: "project.id"), value)
            case "senderId":
                if let sender = string(value, what: "project.senderId") {
                    if sender.isEmpty || !sender.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) {
                        error("project.senderId must be the numeric project number (e.g. \"123456789012\"), found '\(sender)'", at: value)
                    }
                    project.senderId = Located(sender, at: value.location)
                }
            default:
                project.topicApi = located(choice(value, what: "project.topicApi", TopicAPI.self), value)
            }
        }
        return project
    }

    mutating func state(_ node: YAMLNode, at location: SourceLocation) -> ManifestStateSettings {
        var settings = ManifestStateSettings(location: location)
        for (key, _, value) in fields(node, of: "state", known: ManifestSchema.state) {
            guard let text = string(value, what: "state.\(key)") else { continue }
            if key == "backend" {
                if !ManifestSchema.stateBackends.contains(text) {
                    error("unknown state backend '\(text)'" + Suggestions.hint(for: text, in: ManifestSchema.stateBackends), at: value)
                }
                settings.backend = Located(text, at: value.location)
            } else if key == "bucket" {
                settings.bucket = Located(text, at: value.location)
            } else if key == "prefix" {
                settings.prefix = Located(text, at: value.location)
            } else {
                settings.path = Located(text, at: value.location)
            }
        }
        if settings.backend?.value == "gcs" {
            if settings.bucket == nil { error("state.backend gcs needs state.bucket: the bucket's name (without gs://)", at: node) }
            if let path = settings.path {
                diagnostics.append(.error("state.path is for the local backend; with gcs use state.bucket and state.prefix", at: path.location))
            }
        } else if let bucket = settings.bucket ?? settings.prefix {
            diagnostics.append(.error("state.bucket and state.prefix need state.backend: gcs", at: bucket.location))
        }
        return settings
    }

    mutating func defaults(_ node: YAMLNode, at location: SourceLocation) -> ManifestDefaults {
        var defaults = ManifestDefaults(location: location)
        for (key, _, value) in fields(node, of: "defaults", known: ManifestSchema.defaults) {
            if key == "ownership" {
                defaults.ownership = located(choice(value, what: "defaults.ownership", Ownership.self), value)
            } else if key == "groupMode" {
                defaults.groupMode = located(choice(value, what: "defaults.groupMode", GroupMode.self), value)
            } else {
                defaults.protect = located(bool(value, what: "defaults.protect"), value)
            }
        }
        return defaults
    }

    /// A file's devices, decoded in the order written (so are their diagnostics) and added to the table in name
    /// order (so the table's label sets are numbered as they always were, and the merged table of files that
    /// follow one another in name order needs no sorting); a name written twice keeps its last definition, as a
    /// dictionary would.
    /// `streamed`: the devices of the node's first pairs, as the reader read them (`StreamedDevices.whole` false).
    mutating func devices(_ node: YAMLNode, streamed: [DecodedDevice] = []) -> DeviceTable {
        var decoded: [DecodedDevice] = []
        if case .mapping(let pairs) = node.value { decoded.reserveCapacity(pairs.count) }
        forEachField(node, of: "devices", known: nil) { decoder, name, keyNode, value in
            if decoded.count < streamed.count, streamed[decoded.count].name == name {
                decoded.append(streamed[decoded.count])
                return
            }
            if name.isEmpty {
                decoder.error("devices: a name must not be empty", at: keyNode)
                return
            }
            decoded.append(decoder.device(name, value, at: keyNode.location))
        }
        return Self.table(decoded, order: Self.nameOrder(decoded))
    }

    /// Positions of `decoded` in name order, a name written twice in the order written.
    static func nameOrder(_ decoded: [DecodedDevice]) -> [Int] {
        decoded.indices.sorted { a, b in decoded[a].name != decoded[b].name ? decoded[a].name < decoded[b].name : a < b }
    }

    /// The table of `decoded`, in `order` (`nameOrder`).
    static func table(_ decoded: [DecodedDevice], order: [Int]) -> DeviceTable {
        var table = DeviceTable()
        for (rank, index) in order.enumerated() {
            if rank + 1 < order.count && decoded[order[rank + 1]].name == decoded[index].name { continue }
            let device = decoded[index]
            let taken = table.append(
                name: device.name, registration: device.registration?.value,
                labels: device.labels, file: device.location.file, line: device.location.line, column: device.location.column)
            if taken == nil, let written = device.registration?.location { table.setRegistrationLocation(written, at: table.count - 1) }
        }
        return table
    }

    struct DecodedDevice {
        var name: String
        var registration: Located<Registration>?
        var labels: [(key: String, value: String)]
        var location: SourceLocation
    }

    mutating func device(_ name: String, _ node: YAMLNode, at location: SourceLocation) -> DecodedDevice {
        var device = DecodedDevice(name: name, registration: nil, labels: [], location: location)
        let errorsBefore = diagnostics.count
        var ids = 0
        var id: (kind: Registration.Kind, node: YAMLNode)?
        forEachField(node, of: "device/\(name)", known: ManifestSchema.device) { decoder, key, _, value in
            switch key {
            case "token", "fid":
                ids += 1
                id = (key == "token" ? .token : .fid, value)
            default: device.labels = decoder.labels(value, owner: "device/\(name)")
            }
        }
        if ids != 1 {
            if diagnostics.count == errorsBefore || ids > 1 {
                diagnostics.append(.error("device/\(name) needs exactly one of 'token' or 'fid'", at: location))
            }
        } else if let id, let text = string(id.node, what: "device/\(name) \(id.kind.rawValue)") {
            device.registration = Located(Registration(value: text, kind: id.kind), at: id.node.location)
        }
        return device
    }

    mutating func includes(_ node: YAMLNode) -> [Located<String>] {
        guard case .sequence(let items) = node.value else {
            error("include must be a list of manifest files or directories (relative to this file), found \(node.kindName)", at: node)
            return []
        }
        return items.compactMap { item in string(item, what: "include entry").map { Located($0, at: item.location) } }
    }

    mutating func deviceFiles(_ node: YAMLNode) -> [Located<String>] {
        guard case .sequence(let items) = node.value else {
            error("deviceFiles must be a list of JSON Lines (.jsonl) or CSV (.csv) files, found \(node.kindName)", at: node)
            return []
        }
        return items.compactMap { item in
            guard let path = string(item, what: "deviceFiles entry") else { return nil }
            guard DeviceFileReader.Format(path: path) != nil else {
                error("'\(path)' is neither JSON Lines (.jsonl, .ndjson) nor CSV (.csv)", at: item)
                return nil
            }
            return Located(path, at: item.location)
        }
    }

    /// As written; a key given twice (only a merge key can bring one, and it never does) would keep its last value.
    mutating func labels(_ node: YAMLNode, owner: @autoclosure () -> String) -> [(key: String, value: String)] {
        var labels: [(key: String, value: String)] = []
        forEachField(node, of: "\(owner()) labels", known: nil) { decoder, key, _, value in
            if let text = decoder.string(value, what: "\(owner()) label '\(key)'") { labels.append((key, text)) }
        }
        return labels
    }

    mutating func group(_ name: String, _ node: YAMLNode, at location: SourceLocation) -> ManifestGroup {
        let owner = "\(Address.group(name))"
        var group = ManifestGroup(name: name, members: [], membersLocation: node.location, protect: nil, location: location)
        if case .sequence = node.value {
            group.members = members(node, owner: owner)
            return group
        }
        for (key, _, value) in fields(node, of: owner, known: ManifestSchema.group) {
            if key == "members" {
                group.members = members(value, owner: owner)
                group.membersLocation = value.location
            } else if key == "mode" {
                group.mode = located(choice(value, what: "\(owner) mode", GroupMode.self), value)
            } else {
                group.protect = located(bool(value, what: "\(owner) protect"), value)
            }
        }
        return group
    }

    mutating func topic(_ name: String, _ node: YAMLNode, at location: SourceLocation) -> ManifestTopic {
        let owner = "\(Address.topic(name))"
        var topic = ManifestTopic(
            name: name, members: [], selector: nil, exclude: [], membersLocation: node.location, ownership: nil, protect: nil,
            location: location)
        if case .sequence = node.value {
            topic.members = members(node, owner: owner)
            return topic
        }
        for (key, _, value) in fields(node, of: owner, known: ManifestSchema.topic) {
            switch key {
            case "ownership": topic.ownership = located(choice(value, what: "\(owner) ownership", Ownership.self), value)
            case "protect": topic.protect = located(bool(value, what: "\(owner) protect"), value)
            case "allowEmpty": topic.allowEmpty = located(bool(value, what: "\(owner) allowEmpty"), value)
            default:
                topic.membersLocation = value.location
                if case .mapping = value.value {
                    topicMembers(value, into: &topic)
                } else {
                    topic.members = members(value, owner: owner)
                }
            }
        }
        return topic
    }

    mutating func topicMembers(_ node: YAMLNode, into topic: inout ManifestTopic) {
        let owner = "\(Address.topic(topic.name))"
        for (key, _, value) in fields(node, of: "\(owner) members", known: ManifestSchema.topicMembers) {
            switch key {
            case "selector": topic.selector = selector(value, owner: owner)
            case "include": topic.members = members(value, owner: owner)
            default: topic.exclude = members(value, owner: "\(owner) exclude")
            }
        }
    }

    mutating func selector(_ node: YAMLNode, owner: String) -> LabelSelector {
        var selector = LabelSelector(labels: [], location: node.location)
        let entries = fields(node, of: "\(owner) selector", known: nil)
        for (key, _, value) in entries {
            switch value.value {
            case .scalar(let text, _) where !value.isNull:
                selector.labels.append((key, [text]))
            case .sequence(let items):
                let values = items.compactMap { string($0, what: "\(owner) selector value for '\(key)'") }
                if values.isEmpty { error("\(owner) selector '\(key)' lists no values", at: value) }
                selector.labels.append((key, values))
            default:
                error(
                    "\(owner) selector '\(key)' must be a label value or a list of values, found \(value.isNull ? "nothing" : value.kindName)",
                    at: value)
            }
        }
        if entries.isEmpty, case .mapping = node.value { error("\(owner) selector is empty: name at least one label", at: node) }
        return selector
    }

    mutating func members(_ node: YAMLNode, owner: String) -> [MemberReference] {
        if node.isNull { return [] }
        guard case .sequence(let items) = node.value else {
            error("\(owner) members must be a list of device names or registrations, found \(node.kindName)", at: node)
            return []
        }
        var members: [MemberReference] = []
        members.reserveCapacity(items.count)
        for item in items {
            switch item.value {
            case .scalar(let text, _) where !item.isNull:
                members.append(.name(Located(text, at: item.location)))
            case .mapping:
                var explicit: [(Registration.Kind, String)] = []
                let errorsBefore = diagnostics.count
                for (key, _, value) in fields(item, of: "\(owner) member", known: ManifestSchema.explicitMember) {
                    if let text = string(value, what: "\(owner) member \(key)") { explicit.append((key == "fid" ? .fid : .token, text)) }
                }
                if explicit.count == 1 {
                    members.append(.explicit(Registration(value: explicit[0].1, kind: explicit[0].0), item.location))
                } else if diagnostics.count == errorsBefore || explicit.count > 1 {
                    error("\(owner): a member mapping needs exactly one of 'token' or 'fid'", at: item)
                }
            default:
                error("\(owner): each member must be a device name or a registration, found \(item.isNull ? "nothing" : item.kindName)", at: item)
            }
        }
        return members
    }

    // MARK: Helpers

    mutating func error(_ message: String, at node: YAMLNode) {
        diagnostics.append(.error(message, at: node.location))
    }

    /// The pairs of a mapping; unknown keys (when `known` is given) are reported with a suggestion.
    mutating func fields(_ node: YAMLNode, of what: @autoclosure () -> String, known: [String]?) -> [(String, YAMLNode, YAMLNode)] {
        var result: [(String, YAMLNode, YAMLNode)] = []
        forEachField(node, of: what(), known: known) { _, key, keyNode, value in result.append((key, keyNode, value)) }
        return result
    }

    /// `fields` without the list: devices are decoded by the million, and a list of copied nodes per device
    /// (and per label mapping) was a good part of the cost.
    mutating func forEachField(
        _ node: YAMLNode, of what: @autoclosure () -> String, known: [String]?,
        _ body: (inout ManifestDecoder, String, YAMLNode, YAMLNode) -> Void
    ) {
        guard let pairs = mapping(node, what: what()) else { return }
        for pair in pairs {
            guard let key = pair.key.scalar else { continue }
            if let known, !known.contains(key) {
                let what = what()
                let place = what.hasPrefix("the top level") ? "the top level" : what
                error("unknown key '\(key)' in \(place)" + Suggestions.hint(for: key, in: known), at: pair.key)
                continue
            }
            body(&self, key, pair.key, pair.value)
        }
    }

    mutating func named<Item>(
        _ node: YAMLNode, what: String, _ decode: (inout ManifestDecoder, String, YAMLNode, SourceLocation) -> Item
    ) -> [String: Item] {
        var items: [String: Item] = [:]
        for (name, keyNode, value) in fields(node, of: what, known: nil) {
            if name.isEmpty {
                error("\(what): a name must not be empty", at: keyNode)
                continue
            }
            items[name] = decode(&self, name, value, keyNode.location)
        }
        return items
    }

    mutating func mapping(_ node: YAMLNode, what: @autoclosure () -> String) -> [YAMLPair]? {
        if case .mapping(let pairs) = node.value { return pairs }
        if node.isNull { return [] }
        error("\(what()) must be a mapping, found \(node.kindName)", at: node)
        return nil
    }

    mutating func string(_ node: YAMLNode, what: @autoclosure () -> String) -> String? {
        if case .scalar(let text, _) = node.value, !node.isNull { return text }
        error("\(what()) must be a string, found \(node.isNull ? "nothing" : node.kindName)", at: node)
        return nil
    }

    mutating func bool(_ node: YAMLNode, what: String) -> Bool? {
        if case .scalar(let text, let plain) = node.value, plain, text == "true" || text == "false" { return text == "true" }
        error("\(what) must be true or false, found \(node.scalar.map { "'\($0)'" } ?? node.kindName)", at: node)
        return nil
    }

    mutating func choice<Choice: RawRepresentable & CaseIterable>(_ node: YAMLNode, what: String, _ type: Choice.Type) -> Choice?
    where Choice.RawValue == String {
        guard let text = string(node, what: what) else { return nil }
        if let value = Choice(rawValue: text) { return value }
        let known = Choice.allCases.map(\.rawValue)
        error("unknown \(what) '\(text)'" + Suggestions.hint(for: text, in: known), at: node)
        return nil
    }

    func located<Value>(_ value: Value?, _ node: YAMLNode) -> Located<Value>? {
        value.map { Located($0, at: node.location) }
    }
}
