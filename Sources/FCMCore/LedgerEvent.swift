import Foundation

/// One completed operation, as appended to the state journal the moment it completes. Replaying the
/// journal over the last full state reproduces the ledger, so a run killed at any moment keeps the
/// record of everything it did (product.md invariant 6) without rewriting the whole state per operation.
package enum LedgerEvent: Codable, Hashable, Sendable {
    case subscribed(topic: String, registration: LedgerRegistration)
    case unsubscribed(topic: String, registration: LedgerRegistration)
    case group(name: String, members: [LedgerRegistration])

    package func apply(to ledger: inout Ledger) {
        switch self {
        case .subscribed(let topic, let registration): ledger.recordSubscription(registration.registration, topic: topic)
        case .unsubscribed(let topic, let registration): ledger.forgetSubscription(registration.registration, topic: topic)
        case .group(let name, let members): ledger.recordGroup(name, members: Set(members.map(\.registration)))
        }
    }
}

extension LedgerEvent {
    /// The journal line, written by hand: one is written per completed operation, and a generic encoder
    /// showed up in profiles at fleet scale. Decoding uses the synthesized Codable form, which this matches.
    package var journalLine: String {
        func quoted(_ text: String) -> String {
            var out = "\""
            for scalar in text.unicodeScalars {
                switch scalar {
                case "\"": out += "\\\""
                case "\\": out += "\\\\"
                default:
                    if scalar.value < 0x20 {
                        out += String(format: "\\u%04x", scalar.value)
                    } else {
                        out.unicodeScalars.append(scalar)
                    }
                }
            }
            return out + "\""
        }
        func registration(_ value: LedgerRegistration) -> String {
            "{\(quoted(value.registration.kind == .fid ? "fid" : "token")):\(quoted(value.registration.value))}"
        }
        switch self {
        case .subscribed(let topic, let value):
            return "{\"subscribed\":{\"registration\":\(registration(value)),\"topic\":\(quoted(topic))}}"
        case .unsubscribed(let topic, let value):
            return "{\"unsubscribed\":{\"registration\":\(registration(value)),\"topic\":\(quoted(topic))}}"
        case .group(let name, let members):
            return "{\"group\":{\"members\":[\(members.map(registration).joined(separator: ","))],\"name\":\(quoted(name))}}"
        }
    }
}
