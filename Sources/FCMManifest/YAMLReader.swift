import CYAML
import FCMCore

/// Reads one YAML document through libyaml's event API into `YAMLNode`s with 1-based locations.
///
/// Aliases are expanded by value; a budget on expanded nodes refuses "billion laughs" documents quickly
/// instead of exhausting memory. Duplicate keys are errors (product.md), and `<<` merge keys are applied.
package struct YAMLReader {
    package static let defaultNodeBudget = 5_000_000
    static let maximumScalarBytes = 64 * 1024

    package var nodeBudget: Int
    /// Whether the top level's `devices:` is read straight into devices (`DeviceEntryStream`) when it has the
    /// common shape, for `ManifestDecoder` (see `YAMLDocument.devices`). Off, the tree holds it like any other
    /// mapping: what the formatter needs.
    package var streamsDevices: Bool

    package init(nodeBudget: Int = YAMLReader.defaultNodeBudget, streamsDevices: Bool = false) {
        self.nodeBudget = nodeBudget
        self.streamsDevices = streamsDevices
    }

    /// Returns the document's root node (nil for an empty stream) and every problem found; the tree in full, as
    /// the streamed devices are not returned.
    package func read(_ bytes: [UInt8], file: String) -> (YAMLNode?, [Diagnostic]) {
        var reader = self
        reader.streamsDevices = false
        let document = reader.readDocument(bytes, file: file)
        return (document.root, document.diagnostics)
    }

    /// The document's tree and problems, whether anchors or aliases were used (expanded nodes lose that fact),
    /// and, with `streamsDevices`, the top level's devices read as they streamed by (`StreamedDevices`: the tree's
    /// `devices` node then holds an empty mapping, or, where the tree took over, each streamed name paired with one).
    package func readDocument(_ bytes: [UInt8], file: String) -> YAMLDocument {
        bytes.withUnsafeBufferPointer { buffer in
            var session = EventSession(file: file, nodeBudget: nodeBudget, streamsDevices: streamsDevices)
            let (root, diagnostics) = session.run(buffer)
            var document = YAMLDocument(root: root, diagnostics: diagnostics, usesAnchors: session.usesAnchors)
            document.devices = session.streamedDevices
            return document
        }
    }
}

package struct YAMLDocument: Sendable {
    package var root: YAMLNode?
    package var diagnostics: [Diagnostic]
    package var usesAnchors: Bool
    /// The top level's `devices`, when they were read as they streamed by (see `StreamedDevices` for what their
    /// node in `root` holds).
    var devices: StreamedDevices?
}

/// What `DeviceEntryStream` read: the devices as written, and their positions in name order. When the tree took
/// over (`whole` false), they are the first pairs of the `devices` node, each standing there as its name and an
/// empty mapping, and `order` is empty.
struct StreamedDevices: Sendable {
    var decoded: [ManifestDecoder.DecodedDevice]
    var order: [Int]
    var whole = true
}

private struct EventSession {
    /// An open collection. A class so children are appended in place: an enum payload copied out and back
    /// would copy the array on every append, quadratic in the size of a mapping.
    final class Frame {
        let isMapping: Bool
        let start: SourceLocation
        let anchor: String?
        var items: [YAMLNode] = []
        var pairs: [YAMLPair] = []
        var pendingKey: YAMLNode?
        var weight = 1

        init(isMapping: Bool, start: SourceLocation, anchor: String?) {
            self.isMapping = isMapping
            self.start = start
            self.anchor = anchor
        }
    }

    static let maximumDepth = 256
    static let maximumScalarBytes = YAMLReader.maximumScalarBytes

    let file: String
    let nodeBudget: Int
    let streamsDevices: Bool
    /// The top level's `devices:` while it streams by.
    var deviceStream: DeviceEntryStream?
    var streamedDevices: StreamedDevices?
    var stack: [Frame] = []
    var anchors: [String: YAMLNode] = [:]
    var root: YAMLNode?
    var documents = 0
    var expanded = 0
    var diagnostics: [Diagnostic] = []
    var usesAnchors = false

    init(file: String, nodeBudget: Int, streamsDevices: Bool) {
        self.file = file
        self.nodeBudget = nodeBudget
        self.streamsDevices = streamsDevices
    }

    func location(_ mark: yaml_mark_t) -> SourceLocation {
        SourceLocation(file: file, line: Int(mark.line) + 1, column: Int(mark.column) + 1)
    }

    mutating func run(_ buffer: UnsafeBufferPointer<UInt8>) -> (YAMLNode?, [Diagnostic]) {
        var parser = yaml_parser_t()
        guard yaml_parser_initialize(&parser) == 1 else {
            return (nil, [.error("libyaml could not allocate a parser", at: SourceLocation(file: file, line: 1, column: 1))])
        }
        defer { yaml_parser_delete(&parser) }
        if let base = buffer.baseAddress, buffer.count > 0 {
            yaml_parser_set_input_string(&parser, base, buffer.count)
        } else {
            return (nil, [])
        }
        var event = yaml_event_t()
        while true {
            guard yaml_parser_parse(&parser, &event) == 1 else {
                diagnostics.append(parserError(parser, buffer))
                return (nil, diagnostics)
            }
            let done = event.type == YAML_STREAM_END_EVENT
            let keepGoing = deviceStream == nil ? handle(&event) : stream(&event)
            yaml_event_delete(&event)
            if done || !keepGoing { break }
        }
        return (diagnostics.hasErrors ? nil : root, diagnostics)
    }

    func parserError(_ parser: yaml_parser_t, _ buffer: UnsafeBufferPointer<UInt8>) -> Diagnostic {
        let problem = parser.problem.map { String(cString: $0) } ?? "malformed YAML"
        var message = "YAML syntax: \(problem)"
        if let context = parser.context.map({ String(cString: $0) }) {
            message += " (\(context) at line \(parser.context_mark.line + 1), column \(parser.context_mark.column + 1))"
        }
        if parser.error == YAML_READER_ERROR {
            // The reader reports only a byte offset; count lines and characters up to it ourselves.
            let offset = min(Int(parser.problem_offset), buffer.count)
            var line = 1
            var column = 1
            for byte in buffer[..<offset] {
                if byte == UInt8(ascii: "\n") {
                    line += 1
                    column = 1
                } else if byte & 0xC0 != 0x80 {
                    column += 1
                }
            }
            message = "the file is not valid UTF-8 text: \(problem) at byte \(offset); save it as UTF-8"
            return .error(message, at: SourceLocation(file: file, line: line, column: column))
        }
        // At the end of the stream the problem mark is useless; where the unfinished construct began is not.
        let mark = problem == "found unexpected end of stream" && parser.context != nil ? parser.context_mark : parser.problem_mark
        return .error(message, at: location(mark))
    }

    static func string(_ pointer: UnsafeMutablePointer<yaml_char_t>?, length: Int? = nil) -> String? {
        guard let pointer else { return nil }
        if let length {
            return String(decoding: UnsafeBufferPointer(start: pointer, count: length), as: UTF8.self)
        }
        return String(cString: UnsafeRawPointer(pointer).assumingMemoryBound(to: CChar.self))
    }

    /// Returns false to stop reading (a fatal problem was recorded).
    mutating func handle(_ event: inout yaml_event_t) -> Bool {
        let at = location(event.start_mark)
        switch event.type {
        case YAML_DOCUMENT_START_EVENT:
            documents += 1
            if documents > 1 {
                diagnostics.append(.error("a manifest file holds one YAML document; split further documents into their own files", at: at))
                return false
            }
        case YAML_SCALAR_EVENT:
            let scalar = event.data.scalar
            guard scalar.length <= Self.maximumScalarBytes else {
                diagnostics.append(
                    .error(
                        "a value of \(scalar.length) bytes, more than the \(Self.maximumScalarBytes / 1024) KiB any manifest value may be "
                            + "(a registration is at most 4 KiB)", at: at))
                return false
            }
            let text = Self.string(scalar.value, length: scalar.length) ?? ""
            let plain = scalar.style == YAML_PLAIN_SCALAR_STYLE && scalar.tag == nil
            return emit(YAMLNode(.scalar(text, plain: plain), at: at), anchor: Self.string(scalar.anchor))
        case YAML_ALIAS_EVENT:
            let name = Self.string(event.data.alias.anchor) ?? ""
            guard var node = anchors[name] else {
                diagnostics.append(.error("alias '*\(name)' refers to no anchor defined before it", at: at))
                return false
            }
            node.location = at
            return emit(node, anchor: nil)
        case YAML_SEQUENCE_START_EVENT, YAML_MAPPING_START_EVENT:
            // A manifest is a few levels deep; a bound keeps hostile input from building a tree whose
            // (recursive) release would overflow the stack, and keeps work linear in the input.
            guard stack.count < Self.maximumDepth else {
                diagnostics.append(.error("nesting deeper than \(Self.maximumDepth) levels; a manifest needs far fewer", at: at))
                return false
            }
            let isMapping = event.type == YAML_MAPPING_START_EVENT
            // A second `devices` is a duplicate key, and an anchored mapping could be an alias's: both for the tree.
            if isMapping, streamsDevices, streamedDevices == nil, stack.count == 1, let top = stack.last, top.isMapping,
                top.pendingKey?.scalar == "devices", event.data.mapping_start.anchor == nil, event.data.mapping_start.tag == nil
            {
                deviceStream = DeviceEntryStream(file: file, start: at)
                return true
            }
            let anchor = isMapping ? Self.string(event.data.mapping_start.anchor) : Self.string(event.data.sequence_start.anchor)
            stack.append(Frame(isMapping: isMapping, start: at, anchor: anchor))
        case YAML_SEQUENCE_END_EVENT:
            guard let frame = stack.popLast(), !frame.isMapping else { return false }
            return emit(YAMLNode(.sequence(frame.items), at: frame.start, weight: frame.weight), anchor: frame.anchor, counted: true)
        case YAML_MAPPING_END_EVENT:
            guard let frame = stack.popLast(), frame.isMapping else { return false }
            let merged = applyMergeKeys(frame.pairs)
            checkDuplicateKeys(merged.pairs, explicit: merged.explicitCount)
            return emit(YAMLNode(.mapping(merged.pairs), at: frame.start, weight: frame.weight), anchor: frame.anchor, counted: true)
        default:
            break
        }
        return true
    }

    /// One event of the top level's `devices:`; at its end, an empty mapping stands in for it in the tree. An event
    /// the stream does not read hands the devices over to the tree, which goes on from that event.
    mutating func stream(_ event: inout yaml_event_t) -> Bool {
        let scalar = event.type == YAML_SCALAR_EVENT
        // Over the budget, the tree says so: it counts this scalar itself.
        let outcome = scalar && expanded + 1 > nodeBudget ? .unusual : deviceStream?.take(event)
        switch outcome {
        case .more?:
            if scalar { expanded += 1 }
            return true
        case .unusual?, nil:
            takeOver()
            return handle(&event)
        case .finished?:
            // Changed where it lies (`deviceStream?.take`): a copy taken out and put back was most of the stream's cost.
            guard let devices = deviceStream else { return false }
            deviceStream = nil
            streamedDevices = StreamedDevices(decoded: devices.devices, order: devices.order)
            return emit(YAMLNode(.mapping([]), at: devices.start, weight: devices.weight), anchor: nil, counted: true)
        }
    }

    /// The tree of what the stream read, built as the events would have built it: the devices read whole, then the
    /// one being read, up to the event the stream stopped at. Their scalars are in the budget already.
    ///
    /// A device read whole met no diagnostic: in the tree it is its name (the `devices` mapping checks names for
    /// twins) and an empty mapping, and the decoder takes it as the stream read it (`StreamedDevices.whole` false),
    /// so a late surprise costs the devices before it no second reading. The device being read is rebuilt event by
    /// event, places included: the tree goes on inside it, and may report a key of it written twice.
    mutating func takeOver() {
        guard let devices = deviceStream else { return }
        deviceStream = nil
        func place(_ line: Int, _ column: Int) -> SourceLocation { SourceLocation(file: file, line: line, column: column) }
        // The stream refuses a null value and a plain `<<` key, so a value or key whose text reads as one was quoted
        // (plain `~` or `null` names and label keys are taken, and rebuilt as not plain: only `<<` looks at a key's
        // style, and only a value's style decides whether it is null).
        func scalar(_ text: String, at location: SourceLocation) {
            let looksSpecial = text == "<<" || YAMLNode.isNull(text, plain: true)
            _ = emit(YAMLNode(.scalar(text, plain: !looksSpecial), at: location), anchor: nil, counted: true)
        }
        func open(at location: SourceLocation) { stack.append(Frame(isMapping: true, start: location, anchor: nil)) }
        func close() {
            guard let frame = stack.popLast() else { return }
            _ = emit(YAMLNode(.mapping(frame.pairs), at: frame.start, weight: frame.weight), anchor: nil, counted: true)
        }
        open(at: devices.start)
        for device in devices.devices {
            scalar(device.name, at: device.location)
            open(at: device.location)
            close()
        }
        streamedDevices = StreamedDevices(decoded: devices.devices, order: [], whole: false)
        guard let current = devices.current else { return }
        var labels = current.labels.makeIterator()
        var pendingLabel: (key: String, value: String)?
        for (role, at) in zip(devices.roles, devices.places) {
            let location = place(at.line, at.column)
            switch role {
            case .name: scalar(current.name, at: location)
            case .deviceStart, .labelsStart: open(at: location)
            case .key(let word): scalar(word, at: location)
            case .idValue: scalar(current.registration?.value.value ?? "", at: location)
            case .labelKey:
                pendingLabel = labels.next()
                if let pendingLabel {
                    scalar(pendingLabel.key, at: location)
                } else if case .labelValue(let key) = devices.expecting {
                    // The last key read, whose value the stream did not take.
                    scalar(key, at: location)
                }
            case .labelValue: scalar(pendingLabel?.value ?? "", at: location)
            case .labelsEnd: close()
            }
        }
    }

    /// Attaches a finished node to its parent. `counted` nodes already added themselves to the budget as
    /// they were built; scalars and aliases add their weight here.
    mutating func emit(_ node: YAMLNode, anchor: String?, counted: Bool = false) -> Bool {
        if !counted {
            expanded += node.weight
            if expanded > nodeBudget {
                diagnostics.append(
                    .error(
                        "the document expands to more than \(nodeBudget) nodes through aliases; refusing it "
                            + "(an alias bomb?): use fewer nested aliases", at: node.location))
                return false
            }
        }
        if let anchor {
            anchors[anchor] = node
            usesAnchors = true
        }
        guard let top = stack.last else {
            root = node
            return true
        }
        top.weight += node.weight
        if !top.isMapping {
            top.items.append(node)
        } else if let key = top.pendingKey {
            top.pairs.append(YAMLPair(key: key, value: node))
            top.pendingKey = nil
        } else {
            top.pendingKey = node
        }
        return true
    }

    /// `<<: *base` (or a list of them) adds the keys the mapping does not set itself, YAML 1.1 style.
    mutating func applyMergeKeys(_ pairs: [YAMLPair]) -> (pairs: [YAMLPair], explicitCount: Int) {
        guard pairs.contains(where: { Self.isMergeKey($0.key) }) else { return (pairs, pairs.count) }
        var own = pairs.filter { !Self.isMergeKey($0.key) }
        let explicitCount = own.count
        var present = Set(own.compactMap { $0.key.scalar })
        for pair in pairs where Self.isMergeKey(pair.key) {
            let sources: [YAMLNode]
            switch pair.value.value {
            case .mapping: sources = [pair.value]
            case .sequence(let items): sources = items
            case .scalar:
                diagnostics.append(.error("a merge key '<<' takes a mapping or a list of mappings, found a scalar", at: pair.value.location))
                continue
            }
            for source in sources {
                guard case .mapping(let inherited) = source.value else {
                    diagnostics.append(.error("a merge key '<<' takes mappings only, found \(source.kindName)", at: source.location))
                    continue
                }
                for inheritedPair in inherited {
                    guard let key = inheritedPair.key.scalar, !present.contains(key) else { continue }
                    present.insert(key)
                    own.append(inheritedPair)
                }
            }
        }
        return (own, explicitCount)
    }

    static func isMergeKey(_ node: YAMLNode) -> Bool {
        if case .scalar("<<", true) = node.value { return true }
        return false
    }

    /// Mappings this small are checked pair by pair: most of a manifest's mappings are a device's two or three
    /// keys, where building a dictionary cost more than the comparisons.
    static let smallMapping = 8

    /// Only keys written in this mapping are checked: merged keys never clash by construction.
    mutating func checkDuplicateKeys(_ pairs: [YAMLPair], explicit: Int) {
        if explicit <= Self.smallMapping {
            checkDuplicateKeysPairwise(pairs, explicit: explicit)
            return
        }
        // Sized once (a fleet's `devices:` holds thousands of keys); holding positions, not locations.
        var firstSeen = [String: Int](minimumCapacity: explicit)
        for index in 0..<explicit {
            let pair = pairs[index]
            guard let key = pair.key.scalar else {
                diagnostics.append(.error("mapping keys must be scalars, found \(pair.key.kindName)", at: pair.key.location))
                continue
            }
            if let earlier = firstSeen[key] {
                let first = pairs[earlier].key.location
                diagnostics.append(
                    .error("duplicate key '\(key)' (first defined at line \(first.line), column \(first.column))", at: pair.key.location))
            } else {
                firstSeen[key] = index
            }
        }
    }
    /// `checkDuplicateKeys` without a dictionary: the same diagnostics, in the same order.
    mutating func checkDuplicateKeysPairwise(_ pairs: [YAMLPair], explicit: Int) {
        for index in 0..<explicit {
            let pair = pairs[index]
            guard let key = pair.key.scalar else {
                diagnostics.append(.error("mapping keys must be scalars, found \(pair.key.kindName)", at: pair.key.location))
                continue
            }
            guard let earlier = (0..<index).first(where: { pairs[$0].key.scalar == key }) else { continue }
            let first = pairs[earlier].key.location
            diagnostics.append(.error("duplicate key '\(key)' (first defined at line \(first.line), column \(first.column))", at: pair.key.location))
        }
    }
}
