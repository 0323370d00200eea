/// One complaint, as a google.rpc.BadRequest field violation: `field` is the proto path Google names (none
/// for the request root), `description` the text it also puts in the error message.
struct ContractViolation: Sendable, Equatable {
    var field: String?
    var description: String
}

/// Walks a body as Google's JSON front end does before FCM sees it, collecting its complaints in document
/// order. The texts follow protobuf's JSON converter (ProtoWriter / ProtoStreamObjectWriter), which matches
/// the errors recorded from FCM and other Google APIs; where nothing was recorded they are that code's words.
struct ContractValidator {
    let schema: ContractSchema
    var violations: [ContractViolation] = []

    init(schema: ContractSchema = .fcm) {
        self.schema = schema
    }

    /// Checks `node` as message `id` at `path` and returns it with members under their proto names (the
    /// rules after this read one spelling). Unknown and invalid members are dropped from the result.
    mutating func message(_ node: ContractJSON, as id: String, at path: String) -> ContractJSON {
        guard let type = schema.messages[id] else { return node }
        var taken: [String: String] = [:]
        var out: [(key: String, value: ContractJSON)] = []
        for (name, value) in node.members {
            guard let field = type.field(named: name) else {
                invalidName(at: path, name, "Cannot find field.")
                continue
            }
            // A null is an absent field; it sets no oneof member either.
            if case .null = value { continue }
            if let oneof = field.oneof {
                if let holder = taken[oneof], holder != field.protoName {
                    invalidValue(at: path, "oneof", "oneof field '\(oneof)' is already set. Cannot set '\(name)'")
                    continue
                }
                taken[oneof] = field.protoName
            }
            if let checked = member(field, name: name, value: value, in: path) { out.append((field.protoName, checked)) }
        }
        return .object(out)
    }

    mutating func member(_ field: ContractSchema.Field, name: String, value: ContractJSON, in parent: String) -> ContractJSON? {
        let location = Self.join(parent, field.protoName)
        guard case .array(let items) = value else { return single(field, name: name, value: value, parent: parent, location: location) }
        switch field.kind {
        case .value: return value
        case .map:
            invalidValue(at: parent, "Map", "Cannot bind a list to map for field '\(name)'.")
            return nil
        default: break
        }
        guard field.repeated else {
            invalidName(at: parent, name, "Proto field is not repeating, cannot start list.")
            return nil
        }
        var out: [ContractJSON] = []
        for (index, item) in items.enumerated() {
            switch item {
            case .null: continue
            case .array:
                // Lists of lists exist in no FCM field; the converter's answer to one is a guess.
                invalidName(at: location, name, "Proto field is not repeating, cannot start list.")
            default:
                if let checked = single(field, name: name, value: item, parent: parent, location: "\(location)[\(index)]") {
                    out.append(checked)
                }
            }
        }
        return .array(out)
    }

    /// One value (not a list) of `field`.
    mutating func single(_ field: ContractSchema.Field, name: String, value: ContractJSON, parent: String, location: String) -> ContractJSON? {
        switch field.kind {
        case .message(let id):
            if case .object = value { return message(value, as: id, at: location) }
            invalidValue(at: location, "type.googleapis.com/" + (schema.messages[id]?.protoType ?? id), value.quoted)
            return nil
        case .map(let valueKind, let entryType):
            guard case .object(let entries) = value else {
                invalidValue(at: location, "type.googleapis.com/" + entryType, value.quoted)
                return nil
            }
            return map(entries, of: valueKind, at: location)
        case .structure:
            if case .object = value { return value }
            invalidValue(at: location, "type.googleapis.com/google.protobuf.Struct", value.quoted)
            return nil
        case .value:
            return value
        default:
            if case .object = value {
                invalidValue(at: parent, field.protoName, "Starting an object on a scalar field")
                return nil
            }
            return scalar(field.kind, value, at: location, name: name)
        }
    }

    /// A map's entries are numbered in written order, nulls included: `message.data[0].value`.
    mutating func map(_ entries: [(key: String, value: ContractJSON)], of kind: ContractSchema.Kind, at location: String) -> ContractJSON {
        var out: [(key: String, value: ContractJSON)] = []
        for (index, (key, value)) in entries.enumerated() {
            switch value {
            case .null: continue
            case .object: invalidValue(at: "\(location)[\(index)]", "value", "Starting an object on a scalar field")
            case .array: invalidValue(at: "\(location)[\(index)].value", "Map", "Cannot have repeated items ('\(key)') within a map.")
            default:
                if let checked = scalar(kind, value, at: "\(location)[\(index)].value", name: key) { out.append((key, checked)) }
            }
        }
        return .object(out)
    }

    /// `Invalid JSON payload received. Unknown name "foo" at 'message.notification': Cannot find field.`
    mutating func invalidName(at location: String, _ name: String, _ reason: String) {
        let place = location.isEmpty ? "" : " at '\(location)'"
        violations.append(
            ContractViolation(
                field: location.isEmpty ? nil : location, description: "Invalid JSON payload received. Unknown name \"\(name)\"\(place): \(reason)"))
    }

    /// `Invalid value at 'message.android.priority' (type.googleapis.com/…AndroidMessagePriority), "urgent"`
    mutating func invalidValue(at location: String, _ type: String, _ detail: String) {
        let place = location.isEmpty ? "" : " at '\(location)'"
        violations.append(ContractViolation(field: location.isEmpty ? nil : location, description: "Invalid value\(place) (\(type)), \(detail)"))
    }

    static func join(_ parent: String, _ name: String) -> String { parent.isEmpty ? name : parent + "." + name }
}
