import Foundation
import Testing

@testable import FCMEmulator

/// FCM's documented rules, which run on what the schema accepted.
@Suite struct MessageRulesTests {
    func violations(_ body: String) -> [ContractViolation] { SendContract.violations(of: Data(body.utf8)) }

    static let big = String(repeating: "x", count: 2100)

    @Test(arguments: [
        (#"{"message":{"topic":"a","android":{},"androidV2":{}}}"#, "message.android_v2"),
        (#"{"message":{"topic":"a","data":{"google.x":"1"}}}"#, "message.data"),
        (#"{"message":{"topic":"a","webpush":{"data":{"from":"me"}}}}"#, "message.webpush.data"),
        (#"{"message":{"topic":"a","android":{"data":{"k":"\#(big)"}}}}"#, "message.android.data"),
        (#"{"message":{"token":"t:APA91b","data":{"k":"\#(big)"},"webpush":{"data":{"k":"\#(big)"}}}}"#, "message.data"),
        (#"{"message":{"topic":"a","apns":{"fcm_options":{"image":"ftp://x/y.png"}}}}"#, "message.apns.fcm_options.image"),
        (#"{"message":{"topic":"a","androidV2":{"ttl":"2419201s"}}}"#, "message.android_v2.ttl"),
        (#"{"message":{"topic":"a","android":{"ttl":"-1s"}}}"#, "message.android.ttl"),
        (#"{"message":{"topic":"a","data":{"k":"v"},"apns":{"headers":{"apns-priority":"10"}}}}"#, "message.apns.headers"),
        (#"{"message":{"topic":"a","apns":{"headers":{"APNS-PRIORITY":"10"},"payload":{"aps":{"content-available":1}}}}}"#, "message.apns.headers"),
        (#"{"message":{"topic":"a","webpush":{"fcmOptions":{"link":"http://example.com"}}}}"#, "message.webpush.fcm_options.link"),
        (##"{"message":{"topic":"a","android":{"notification":{"color":"#fff"}}}}"##, "message.android.notification.color"),
        (
            #"{"message":{"topic":"a","androidV2":{"remoteNotification":{"notification":{"color":"red"}}}}}"#,
            "message.android_v2.remote_notification.notification.color"
        ),
    ])
    func refusedWithTheFieldNamed(body: String, field: String) {
        let found = violations(body)
        #expect(found.map(\.field) == [field], "\(found)")
    }

    @Test(arguments: [
        #"{"message":{"topic":"a","data":{"k":"v"},"apns":{"headers":{"apns-priority":"5"}}}}"#,
        #"{"message":{"topic":"a","notification":{"title":"t"},"apns":{"headers":{"apns-priority":"10"}}}}"#,
        #"{"message":{"topic":"a","apns":{"headers":{"apns-priority":"10"},"payload":{"aps":{"alert":"hi"}}}}}"#,
        #"{"message":{"topic":"a","webpush":{"fcm_options":{"link":"https://example.com/x"}}}}"#,
        ##"{"message":{"topic":"a","android":{"ttl":"0s","notification":{"color":"#A0b1C2"}}}}"##,
        #"{"message":{"token":"t:APA91b","data":{"k":"\#(big)"}}}"#,
    ])
    func documentedlyValidMessagesPass(body: String) {
        #expect(violations(body) == [])
    }

    @Test func thePayloadCountsEveryDataMapAndTheNotification() {
        let body = #"{"message":{"token":"t:APA91b","notification":{"title":"\#(Self.big)"},"android":{"data":{"k":"\#(Self.big)"}}}}"#
        let found = violations(body)
        #expect(found.map(\.description) == ["Message payload too big: 4201 bytes; the limit is 4096"])
    }
}

/// Builds a value for every field of a schema (recursively), valid for its kind: proof that the walker
/// knows every field the document declares.
struct SampleBuilder {
    let schema: ContractSchema
    let snakeCase: Bool
    var visited: Set<String> = []

    mutating func object(_ id: String) -> ContractJSON {
        guard let type = schema.messages[id], !visited.contains(id) || id == "Color" else { return .object([]) }
        visited.insert(id)
        var members: [(key: String, value: ContractJSON)] = []
        let fields = Set(type.fields.values.map(\.jsonName)).sorted().compactMap { type.field(named: $0) }
        for field in fields where field.oneof == nil || field.jsonName == "token" {
            let value = sample(field.kind)
            members.append((snakeCase ? field.protoName : field.jsonName, field.repeated ? .array([value, value]) : value))
        }
        return .object(members)
    }

    mutating func sample(_ kind: ContractSchema.Kind) -> ContractJSON {
        switch kind {
        case .string: .string("s")
        case .bool: .bool(true)
        case .int32, .uint32, .int64, .uint64: .number("7")
        case .float, .double: .number("0.5")
        case .duration: .string("1.5s")
        case .timestamp: .string("2026-01-15T01:30:15Z")
        case .enumeration(_, let values): .string(values.last ?? "")
        case .message(let id): object(id)
        case .map(let value, _): .object([("k", sample(value))])
        case .structure: .object([("aps", .object([("alert", .string("hi"))]))])
        case .value: .array([.null, .number("1")])
        }
    }
}
