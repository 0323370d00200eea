import FCMEngine

/// Where `send` says a message went: "device kiosk-7", "a token", "topic/news".
extension MessageDestination {
    var wording: String {
        switch self {
        case .device(let name): "device \(name)"
        case .token: "a token"
        case .fid: "a FID"
        case .object(let address): "\(address)"
        case .condition(let condition): "condition \(condition)"
        }
    }
}
