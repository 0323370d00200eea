import FCMCore

/// A YAML node with its position in the source, so every later diagnostic can point at the exact spot.
package struct YAMLNode: Sendable {
    package enum Value: Sendable {
        case scalar(String, plain: Bool)
        case sequence([YAMLNode])
        case mapping([YAMLPair])
    }

    package var value: Value
    package var location: SourceLocation
    /// Nodes in this subtree, aliases expanded: what the alias budget counts.
    package var weight: Int

    package init(_ value: Value, at location: SourceLocation, weight: Int = 1) {
        self.value = value
        self.location = location
        self.weight = weight
    }

    package var kindName: String {
        switch value {
        case .scalar: "a scalar"
        case .sequence: "a list"
        case .mapping: "a mapping"
        }
    }

    package var scalar: String? {
        if case .scalar(let text, _) = value { return text }
        return nil
    }

    package var isNull: Bool {
        if case .scalar(let text, let plain) = value { return Self.isNull(text, plain: plain) }
        return false
    }

    /// Whether a scalar with this text and style is YAML's null.
    static func isNull(_ text: String, plain: Bool) -> Bool {
        plain && (text.isEmpty || text == "~" || text == "null")
    }
}

package struct YAMLPair: Sendable {
    package var key: YAMLNode
    package var value: YAMLNode

    package init(key: YAMLNode, value: YAMLNode) {
        self.key = key
        self.value = value
    }
}
