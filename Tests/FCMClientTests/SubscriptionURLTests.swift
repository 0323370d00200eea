import FCMClient
import FCMCore
import Foundation
import Testing

/// The v1 URLs are written byte by byte into one buffer; these pin them to what FCM's path templates say.
@Suite struct SubscriptionURLTests {
    struct Unused: HTTPTransport {
        func send(_ request: HTTPRequest) async throws -> HTTPResponse { throw TransportError(url: request.url, message: "not sent") }
    }

    func url(_ value: String, kind: Registration.Kind = .token, topic: String, _ action: SubscriptionChange.Action, project: String = "demo-p")
        -> String
    {
        let service = FCMHTTPService(
            sender: RequestSender(transport: Unused(), credentials: nil),
            endpoints: FCMEndpoints(fcmBase: "http://h:1", iidBase: "", usesEmulator: true),
            project: ProjectSettings(id: project, senderId: "1"))
        let change = SubscriptionChange(topic: topic, registration: Registration(value: value, kind: kind), action: action)
        return service.preview(change)[0].url
    }

    @Test func createAndDeleteNameTheRegistrationAndTopicEscaped() {
        #expect(
            url("abc:APA91b_x-y.z~", topic: "news", .subscribe)
                == "http://h:1/v1/projects/demo-p/registrations/abc%3AAPA91b_x-y.z~/topicSubscriptions?topicName=news")
        #expect(
            url("abc:APA91b", topic: "a%b", .unsubscribe)
                == "http://h:1/v1/projects/demo-p/registrations/abc%3AAPA91b/topicSubscriptions/a%25b?allowMissing=true")
    }

    @Test func everyByteOutsideTheUnreservedSetIsEscapedEvenWhereEachIs() {
        // A registration of nothing but escaped bytes fills the room the builder makes for it exactly.
        let hostile = ":/?#[]@ é"
        let escaped = hostile.utf8.map { String(format: "%%%02X", $0) }.joined()
        #expect(
            url(hostile, topic: "t", .subscribe, project: "p q")
                == "http://h:1/v1/projects/p%20q/registrations/\(escaped)/topicSubscriptions?topicName=t")
        #expect(url("dGVzdGZpZGZvcmZjbWN0bA", kind: .fid, topic: "t", .unsubscribe).contains("/registrations/dGVzdGZpZGZvcmZjbWN0bA/"))
    }
}
