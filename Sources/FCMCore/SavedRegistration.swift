/// `{"token": "…"}` or `{"fid": "…"}`.
package struct SavedRegistration: Codable, Sendable, Hashable {
    package var registration: Registration

    package init(_ registration: Registration) { self.registration = registration }

    private enum CodingKeys: String, CodingKey { case token, fid }

    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        if let fid = try container.decodeIfPresent(String.self, forKey: .fid) {
            registration = Registration(value: fid, kind: .fid)
        } else {
            registration = Registration(value: try container.decode(String.self, forKey: .token), kind: .token)
        }
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(registration.value, forKey: registration.kind == .fid ? .fid : .token)
    }
}
