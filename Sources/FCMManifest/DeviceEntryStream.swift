import CYAML
import FCMCore

/// A file's `devices:` read straight from libyaml's events, without a node for every scalar and mapping: a
/// fleet's manifests are mostly devices, and building their tree and then decoding it was most of the cost of
/// loading them (a reference count, an allocation or two per node).
///
/// Only the shape that needs no diagnostic is read here: `name: {token|fid: text, labels: {key: text, …}}`.
/// Anything else (an anchor or an alias, a tag on a collection, a merge key, a key or a name written twice, a
/// null, an unknown key, a list, an empty name, both or neither of token and fid) is `unusual`: the reader then
/// builds the tree of what was streamed so far (`EventSession.takeOver`) and goes on as a tree from that event,
/// so every problem is reported where it always was, and nothing is read twice.
struct DeviceEntryStream {
    enum Outcome {
        case more
        case finished
        case unusual
    }

    enum Expecting {
        case name, device, field
        case id(Registration.Kind)
        case labels, labelKey
        case labelValue(String)
    }

    /// An event of the current device, in the order read: what the tree is rebuilt from when the stream stops
    /// half-way through a device.
    enum Role {
        case name, deviceStart
        case key(String)
        case idValue, labelsStart, labelKey, labelValue, labelsEnd
    }

    let file: String
    /// Where the `devices` mapping starts.
    let start: SourceLocation
    /// The devices read whole.
    private(set) var devices: [ManifestDecoder.DecodedDevice] = []
    /// `devices` in name order, once the mapping has ended.
    private(set) var order: [Int] = []
    private(set) var expecting = Expecting.name
    /// The device being read.
    private(set) var current: ManifestDecoder.DecodedDevice?
    /// Its events so far, and where each began (line and column, 1-based).
    private(set) var roles: [Role] = []
    private(set) var places: [(line: Int, column: Int)] = []
    /// The device's fields seen so far: 1 token, 2 fid, 4 labels.
    private var fields = 0
    /// The nodes the tree would have held for the mapping, itself included (what an alias of it would weigh).
    private(set) var weight = 1

    /// More labels than this in one device are left to the ordinary reader, which checks their keys through a
    /// dictionary rather than pair by pair.
    static let maximumLabels = 8

    init(file: String, start: SourceLocation) {
        self.file = file
        self.start = start
    }

    mutating func take(_ event: yaml_event_t) -> Outcome {
        let outcome = read(event)
        if case .more = outcome {
            if event.type == YAML_SCALAR_EVENT || event.type == YAML_MAPPING_START_EVENT { weight += 1 }
        }
        return outcome
    }

    private mutating func read(_ event: yaml_event_t) -> Outcome {
        switch (expecting, event.type) {
        case (.name, YAML_MAPPING_END_EVENT):
            return finish()
        case (.name, YAML_SCALAR_EVENT):
            guard let (name, plain) = Self.text(of: event), !name.isEmpty, !(plain && name == "<<") else { return .unusual }
            current = ManifestDecoder.DecodedDevice(name: name, registration: nil, labels: [], location: location(event))
            fields = 0
            roles.removeAll(keepingCapacity: true)
            places.removeAll(keepingCapacity: true)
            record(.name, event)
            expecting = .device
        case (.device, YAML_MAPPING_START_EVENT), (.labels, YAML_MAPPING_START_EVENT):
            let start = event.data.mapping_start
            guard start.anchor == nil, start.tag == nil else { return .unusual }
            if case .labels = expecting {
                record(.labelsStart, event)
                expecting = .labelKey
            } else {
                record(.deviceStart, event)
                expecting = .field
            }
        case (.field, YAML_SCALAR_EVENT):
            guard let (key, _) = Self.text(of: event) else { return .unusual }
            let field =
                switch key {
                case "token": 1
                case "fid": 2
                case "labels": 4
                default: 0
                }
            // An unknown key, one written twice, or a token beside a fid: each is a diagnostic of its own.
            guard field != 0, fields & field == 0, field == 4 || fields & 3 == 0 else { return .unusual }
            fields |= field
            record(.key(key), event)
            expecting = field == 4 ? .labels : .id(field == 1 ? .token : .fid)
        case (.field, YAML_MAPPING_END_EVENT):
            guard fields & 3 != 0, let device = current else { return .unusual }
            devices.append(device)
            current = nil
            expecting = .name
        case (.id(let kind), YAML_SCALAR_EVENT):
            // Interned from libyaml's buffer: no String is made for it.
            let scalar = event.data.scalar
            guard scalar.anchor == nil, scalar.length <= YAMLReader.maximumScalarBytes, let value = scalar.value,
                !Self.isNull(UnsafeBufferPointer(start: value, count: scalar.length), plain: Self.isPlain(scalar))
            else { return .unusual }
            let registration = Registration(utf8: UnsafeRawBufferPointer(start: value, count: scalar.length), kind: kind)
            let written = location(event)
            current?.registration = Located(registration, at: written)
            record(.idValue, event)
            expecting = .field
        case (.labelKey, YAML_SCALAR_EVENT):
            guard let (key, plain) = Self.text(of: event), !(plain && key == "<<"), let labels = current?.labels,
                labels.count < Self.maximumLabels, !labels.contains(where: { $0.key == key })
            else { return .unusual }
            record(.labelKey, event)
            expecting = .labelValue(key)
        case (.labelKey, YAML_MAPPING_END_EVENT):
            record(.labelsEnd, event)
            expecting = .field
        case (.labelValue(let key), YAML_SCALAR_EVENT):
            guard let (text, plain) = Self.text(of: event), !YAMLNode.isNull(text, plain: plain) else { return .unusual }
            current?.labels.append((key, text))
            record(.labelValue, event)
            expecting = .labelKey
        default:
            return .unusual
        }
        return .more
    }

    private mutating func record(_ role: Role, _ event: yaml_event_t) {
        roles.append(role)
        places.append((Int(event.start_mark.line) + 1, Int(event.start_mark.column) + 1))
    }

    /// A name written twice is a diagnostic too; the devices are put in name order here, which finds it.
    private mutating func finish() -> Outcome {
        order = ManifestDecoder.nameOrder(devices)
        for rank in order.indices.dropFirst() where devices[order[rank - 1]].name == devices[order[rank]].name { return .unusual }
        return .finished
    }

    private func location(_ event: yaml_event_t) -> SourceLocation {
        SourceLocation(file: file, line: Int(event.start_mark.line) + 1, column: Int(event.start_mark.column) + 1)
    }

    /// A scalar's text and whether it is plain (untagged), as `YAMLNode` has it; nil for an anchored or an
    /// oversized one, which the ordinary reader handles.
    static func text(of event: yaml_event_t) -> (String, plain: Bool)? {
        let scalar = event.data.scalar
        guard scalar.anchor == nil, scalar.length <= YAMLReader.maximumScalarBytes else { return nil }
        let text = scalar.value.map { String(decoding: UnsafeBufferPointer(start: $0, count: scalar.length), as: UTF8.self) } ?? ""
        return (text, isPlain(scalar))
    }

    static func isPlain(_ scalar: yaml_event_t.__Unnamed_union_data.__Unnamed_struct_scalar) -> Bool {
        scalar.style == YAML_PLAIN_SCALAR_STYLE && scalar.tag == nil
    }

    /// `YAMLNode.isNull` on bytes.
    static func isNull(_ bytes: UnsafeBufferPointer<UInt8>, plain: Bool) -> Bool {
        plain && (bytes.isEmpty || bytes.elementsEqual("~".utf8) || bytes.elementsEqual("null".utf8))
    }
}
