import Foundation
import Testing

@testable import FCMEmulator

/// The messages:send contract: Google's discovery document as the JSON front end reads it, then FCM's rules.
@Suite struct SendContractTests {
    func violations(_ body: String) -> [ContractViolation] { SendContract.violations(of: Data(body.utf8)) }

    @Test func theVendoredDocumentIsTheRecordedOne() throws {
        #expect(FCMDiscoveryDocument.packageVersion == "2.202.0")
        #expect(FCMDiscoveryDocument.revision == "20261023")
        let message = try #require(ContractSchema.fcm.messages["Message"])
        #expect(message.protoType == "google.firebase.fcm.v1.Message")
        for name in ["token", "fid", "topic", "condition", "android_v2", "androidV2", "fcm_options", "fcmOptions"] {
            #expect(message.field(named: name) != nil, "\(name)")
        }
        #expect(message.field(named: "fid")?.oneof == "target")
        #expect(message.field(named: "FcmOptions") == nil, "only the JSON and proto spellings")
    }

    /// Every field of every schema reachable from SendMessageRequest, with a valid value, in both spellings.
    @Test(arguments: [false, true])
    func aMessageWithEveryFieldPasses(snakeCase: Bool) {
        var builder = SampleBuilder(schema: .fcm, snakeCase: snakeCase)
        let body = builder.object("SendMessageRequest")
        var validator = ContractValidator()
        _ = validator.message(body, as: "SendMessageRequest", at: "")
        #expect(validator.violations == [])
        #expect(builder.visited.isSuperset(of: ["AndroidConfigV2", "AndroidNotificationV2", "LightSettings", "Color", "WebpushFcmOptions"]))
    }

    @Test(
        arguments: [
            (
                #"{"message":{"topic":"a","notification":{"foo":1}}}"#, "message.notification",
                #"Invalid JSON payload received. Unknown name "foo" at 'message.notification': Cannot find field."#
            ),
            (#"{"message":{"topic":"a"},"foo":1}"#, nil, #"Invalid JSON payload received. Unknown name "foo": Cannot find field."#),
            (
                #"{"message":{"topic":"a","apns":{"fcmOptions":{"imag":"x"}}}}"#, "message.apns.fcm_options",
                #"Invalid JSON payload received. Unknown name "imag" at 'message.apns.fcm_options': Cannot find field."#
            ),
            (
                #"{"message":{"topic":"a","android":{"priority":"urgent"}}}"#, "message.android.priority",
                #"Invalid value at 'message.android.priority' (type.googleapis.com/google.firebase.fcm.v1.AndroidMessagePriority), "urgent""#
            ),
            (
                #"{"message":{"topic":"a","android":{"notification":{"notification_count":"abc"}}}}"#,
                "message.android.notification.notification_count",
                #"Invalid value at 'message.android.notification.notification_count' (TYPE_INT32), "abc""#
            ),
            (
                #"{"message":{"topic":"a","android":{"notification":{"notificationCount":2147483648}}}}"#,
                "message.android.notification.notification_count",
                #"Invalid value at 'message.android.notification.notification_count' (TYPE_INT32), 2147483648"#
            ),
            (
                #"{"message":{"topic":"a","data":{"a":"b","n":12}}}"#, "message.data[1].value",
                #"Invalid value at 'message.data[1].value' (TYPE_STRING), 12"#
            ),
            (
                #"{"message":{"topic":"a","token":"t:APA91b"}}"#, "message",
                #"Invalid value at 'message' (oneof), oneof field 'target' is already set. Cannot set 'token'"#
            ),
            (
                #"{"message":{"topic":"a","android":{"ttl":"5m"}}}"#, "message.android.ttl",
                #"Invalid value at 'message.android.ttl' (type.googleapis.com/google.protobuf.Duration), Field 'ttl', Illegal duration format; duration must end with 's'"#
            ),
            (
                #"{"message":{"topic":"a","notification":[]}}"#, "message",
                #"Invalid JSON payload received. Unknown name "notification" at 'message': Proto field is not repeating, cannot start list."#
            ),
            (
                #"{"message":{"topic":"a","notification":{"title":{}}}}"#, "message.notification",
                #"Invalid value at 'message.notification' (title), Starting an object on a scalar field"#
            ),
            (
                #"{"message":{"topic":"a","webpush":{"notification":"x"}}}"#, "message.webpush.notification",
                #"Invalid value at 'message.webpush.notification' (type.googleapis.com/google.protobuf.Struct), "x""#
            ),
            (
                #"{"message":{"topic":"a","android":{"direct_boot_ok":1}}}"#, "message.android.direct_boot_ok",
                #"Invalid value at 'message.android.direct_boot_ok' (TYPE_BOOL), 1"#
            ),
        ] as [(String, String?, String)])
    func schemaViolationsAreGooglesWords(body: String, field: String?, description: String) {
        #expect(violations(body) == [ContractViolation(field: field, description: description)])
    }

    @Test func everyViolationIsListedInWrittenOrder() {
        let found = violations(#"{"zz":1,"message":{"topic":"a","b":2,"notification":{"c":3}},"aa":4}"#)
        #expect(found.map(\.field) == [nil, "message", "message.notification", nil])
    }

    @Test func protoJSONLeniencyIsKept() {
        let body = #"""
            {"validateOnly":"true","message":{"topic":"a","name":"out","android":{"priority":"high","ttl":"3.5s","notification":
            {"notification_count":"7","visibility":-1,"notificationPriority":"priority-max","event_time":"2026-01-15T01:30:15.01+02:00",
            "light_settings":{"color":{"red":"0.5","alpha":"NaN"},"lightOnDuration":"1s","light_off_duration":"-0.000000001s"},
            "sticky":null,"body_loc_args":"one"}}}}
            """#
        #expect(violations(body) == [])
    }

    @Test func unparsableBodiesAreLeftToTheCaller() {
        for body in ["", "[]", "{", #"{"message":01}"#, #"{"a":"\ud800"}"#, "{} x"] { #expect(violations(body) == [], "\(body)") }
        #expect(ContractJSON.parse(Data(#"{"a":"\ud83d\ude00\n"}"#.utf8))?["a"]?.string == "😀\n")
    }

    @Test func integersAreExactNearTheirLimits() {
        #expect(ContractValidator.fits(.number("9223372036854775807"), .int64))
        #expect(!ContractValidator.fits(.number("9223372036854775808"), .int64))
        #expect(ContractValidator.fits(.string("4294967295"), .uint32))
        #expect(!ContractValidator.fits(.number("-1"), .uint32))
        #expect(ContractValidator.fits(.number("1e2"), .int32))
        #expect(!ContractValidator.fits(.number("1.5"), .int32))
        #expect(!ContractValidator.fits(.string("0x10"), .int32))
    }

    @Test func theResponseIsGooglesShape() throws {
        let response = SendContract.response(violations(#"{"message":{"topic":"a","notification":{"foo":1}}}"#))
        #expect(response.status == 400)
        let error = try #require((try JSONSerialization.jsonObject(with: response.body) as? [String: Any])?["error"] as? [String: Any])
        #expect(error["status"] as? String == "INVALID_ARGUMENT" && error["code"] as? Int == 400)
        let details = try #require(error["details"] as? [[String: Any]])
        #expect(
            details.map { $0["@type"] as? String } == [
                "type.googleapis.com/google.firebase.fcm.v1.FcmError", "type.googleapis.com/google.rpc.BadRequest",
            ])
        #expect(details[0]["errorCode"] as? String == "INVALID_ARGUMENT")
        let violation = try #require((details[1]["fieldViolations"] as? [[String: String]])?.first)
        #expect(violation == ["field": "message.notification", "description": error["message"] as? String])
    }
}
