import Foundation

/// The discovery document's schemas read as the proto3 messages behind them: field names in both spellings,
/// proto field kinds, and the type names Google's errors quote.
struct ContractSchema: Sendable {
    indirect enum Kind: Sendable {
        case string, bool, int32, uint32, int64, uint64, float, double
        /// `google-duration` and `google-datetime`: google.protobuf.Duration and Timestamp, strings in JSON.
        case duration, timestamp
        case enumeration(type: String, values: [String])
        case message(String)
        case map(value: Kind, entryType: String)
        /// google.protobuf.Struct (`additionalProperties` of type `any`): any JSON object.
        case structure
        /// google.protobuf.Value: any JSON value.
        case value
    }

    struct Field: Sendable {
        let jsonName: String
        let protoName: String
        let kind: Kind
        let repeated: Bool
        let oneof: String?
    }

    struct Message: Sendable {
        let protoType: String
        let fields: [String: Field]

        /// proto3 JSON parsers accept the lowerCamelCase JSON name and the proto (snake_case) name alike.
        func field(named name: String) -> Field? { fields[name] }
    }

    static let package = "google.firebase.fcm.v1."

    /// Oneofs are not in the discovery format. Message's `target` is the "Union field target" of the REST
    /// reference (projects.messages), with `fid` added in 2026 (wire reference §0.4).
    static let oneofs = ["Message": ["token": "target", "topic": "target", "condition": "target", "fid": "target"]]

    /// Schemas whose proto name is not `google.firebase.fcm.v1.<id>`. The nested LightSettings name is a
    /// guess from how discovery flattens nested types.
    static let protoTypes = [
        "Color": "google.type.Color",
        "GoogleFirebaseFcmV1AndroidNotificationV2LightSettings": package + "AndroidNotificationV2.LightSettings",
    ]

    /// Enum type names are not in the discovery format either. AndroidMessagePriority is recorded in real FCM
    /// errors; the others (NotificationPriority, Visibility, Proxy) are the REST reference's section names.
    static let enumTypes = ["AndroidConfig.priority": "AndroidMessagePriority"]

    let messages: [String: Message]

    static let fcm: ContractSchema = {
        guard let schema = try? ContractSchema(document: FCMDiscoveryDocument.json) else {
            fatalError("the vendored discovery document does not parse: run scripts/vendor-fcm-discovery.sh")
        }
        return schema
    }()

    init(document: String) throws {
        let root = try JSONSerialization.jsonObject(with: Data(document.utf8)) as? [String: Any] ?? [:]
        let schemas = root["schemas"] as? [String: [String: Any]] ?? [:]
        var messages: [String: Message] = [:]
        for (id, schema) in schemas {
            let protoType = Self.protoTypes[id] ?? Self.package + id
            var fields: [String: Field] = [:]
            for (name, property) in schema["properties"] as? [String: [String: Any]] ?? [:] {
                let protoName = Self.snakeCase(name)
                let (kind, repeated) = Self.kind(of: property, owner: id, name: name, protoType: protoType)
                let field = Field(jsonName: name, protoName: protoName, kind: kind, repeated: repeated, oneof: Self.oneofs[id]?[name])
                fields[name] = field
                fields[protoName] = field
            }
            messages[id] = Message(protoType: protoType, fields: fields)
        }
        self.messages = messages
    }

    static func kind(of property: [String: Any], owner: String, name: String, protoType: String) -> (Kind, repeated: Bool) {
        if let reference = property["$ref"] as? String { return (.message(reference), false) }
        let format = property["format"] as? String
        switch property["type"] as? String {
        case "array":
            let items = property["items"] as? [String: Any] ?? [:]
            return (kind(of: items, owner: owner, name: name, protoType: protoType).0, true)
        case "object":
            let values = property["additionalProperties"] as? [String: Any] ?? ["type": "any"]
            if values["type"] as? String == "any" { return (.structure, false) }
            let entryType = "\(protoType).\(upperCamel(name))Entry"
            return (.map(value: kind(of: values, owner: owner, name: name, protoType: protoType).0, entryType: entryType), false)
        case "integer": return (format == "uint32" ? .uint32 : .int32, false)
        case "number": return (format == "float" ? .float : .double, false)
        case "boolean": return (.bool, false)
        case "any": return (.value, false)
        default:
            if let values = property["enum"] as? [String] {
                return (.enumeration(type: package + (enumTypes["\(owner).\(name)"] ?? upperCamel(name)), values: values), false)
            }
            switch format {
            case "google-duration": return (.duration, false)
            case "google-datetime": return (.timestamp, false)
            case "int64": return (.int64, false)
            case "uint64": return (.uint64, false)
            default: return (.string, false)
            }
        }
    }

    /// `androidV2` → `android_v2`, `fcmOptions` → `fcm_options`: protoc's JSON names run the other way.
    static func snakeCase(_ name: String) -> String {
        var out = ""
        for character in name {
            if character.isUppercase {
                out += "_" + character.lowercased()
            } else {
                out.append(character)
            }
        }
        return out
    }

    static func upperCamel(_ name: String) -> String { name.prefix(1).uppercased() + name.dropFirst() }
}
