/// The order `fmt` writes things in: fixed keys in schema order, names and labels sorted, member lists
/// sorted by value. `path` is the chain of keys from the document root (`[]` stands for a list item).
enum CanonicalOrder {
    static func keyOrder(for path: [String]) -> [String]? {
        switch path.count {
        case 0: return ManifestSchema.topLevel
        case 1:
            switch path[0] {
            case "project": return ManifestSchema.project
            case "state": return ManifestSchema.state
            case "defaults": return ManifestSchema.defaults
            default: return nil  // devices, groups, topics: names, sorted
            }
        case 2:
            switch path[0] {
            case "devices": return ManifestSchema.device
            case "groups": return ManifestSchema.group
            case "topics": return ManifestSchema.topic
            default: return nil
            }
        default:
            if path.count == 3 && path[0] == "topics" && path[2] == "members" { return ManifestSchema.topicMembers }
            if path.last == "[]" { return ManifestSchema.explicitMember }
            return nil
        }
    }

    static func pairs(_ pairs: [YAMLPair], path: [String]) -> [YAMLPair] {
        let order = keyOrder(for: path)
        return pairs.sorted { lhs, rhs in
            let l = lhs.key.scalar ?? ""
            let r = rhs.key.scalar ?? ""
            if let order {
                let li = order.firstIndex(of: l) ?? order.count
                let ri = order.firstIndex(of: r) ?? order.count
                if li != ri { return li < ri }
            }
            return l < r
        }
    }

    /// Member lists (and selector value lists) are sets: sorted by value, explicit `{token: …}` by theirs.
    static func items(_ items: [YAMLNode], path: [String]) -> [YAMLNode] {
        items.sorted { sortKey($0) < sortKey($1) }
    }

    static func sortKey(_ node: YAMLNode) -> String {
        switch node.value {
        case .scalar(let text, _): return text
        case .mapping(let pairs): return pairs.first?.value.scalar ?? ""
        case .sequence: return ""
        }
    }
}
