import FCMClient
import FCMCore
import Foundation
import Testing

/// Answers that would forget or invent records if read leniently are errors instead.
@Suite struct StrictAnswerTests {
    func page(_ json: String) throws -> [String] { try FCMHTTPService.subscriptionPage(Data(json.utf8)).topics }

    @Test func wellFormedListsInEitherCasing() throws {
        #expect(
            try page(#"{"topicSubscriptions": [{"topicName": "a"}, {"name": "projects/p/registrations/r/topicSubscriptions/b"}]}"#) == ["a", "b"])
        #expect(try page(#"{"topic_subscriptions": [{"topic_name": "c"}]}"#) == ["c"])
        #expect(try page("{}") == [], "proto3 JSON leaves an empty list out")
    }

    @Test(arguments: [
        #"{"topicSubscriptions": "news"}"#, #"{"topicSubscriptions": null}"#, #"{"topicSubscriptions": {"topicName": "a"}}"#,
        #"{"topicSubscriptions": ["a"]}"#, #"{"topicSubscriptions": [{"topicName": 7}]}"#, #"{"topicSubscriptions": [{}]}"#,
        #"{"topicSubscriptions": [], "nextPageToken": 3}"#, "<html>Bad Gateway</html>", "[]",
    ])
    func wrongTypesAreUnreadableNotEmpty(json: String) {
        #expect(throws: FCMServiceError.self) { try page(json) }
    }

    func answer(_ body: String, status: Int = 200) -> HTTPResponse { HTTPResponse(status: status, headers: [:], body: Data(body.utf8)) }

    @Test func aChangeIsDoneOnlyWhenItsAnswerSaysSo() throws {
        let subscribe = SubscriptionChange(topic: "news", registration: Registration(inferring: "r1"), action: .subscribe)
        let unsubscribe = SubscriptionChange(topic: "news", registration: Registration(inferring: "r1"), action: .unsubscribe)
        try FCMHTTPService.checkChangeAnswer(answer(#"{"name": "projects/p/registrations/r1/topicSubscriptions/news"}"#), subscribe)
        try FCMHTTPService.checkChangeAnswer(answer("{}"), subscribe)
        try FCMHTTPService.checkChangeAnswer(answer(""), unsubscribe)
        #expect(throws: FCMServiceError.self) { try FCMHTTPService.checkChangeAnswer(answer("<html>ok</html>"), subscribe) }
        #expect(throws: FCMServiceError.self) { try FCMHTTPService.checkChangeAnswer(answer("garbage"), unsubscribe) }
        #expect(throws: FCMServiceError.self) { try FCMHTTPService.checkChangeAnswer(answer(#"{"topicName": "sports"}"#), subscribe) }
        // The object is read whole, though only a name in it matters.
        try FCMHTTPService.checkChangeAnswer(
            answer(#" {"create_time": "2026-01-15T01:30:15.01Z", "topic_name": "news", "x": [1, {"y": null}], "n": -2.5e3} "#), subscribe)
        try FCMHTTPService.checkChangeAnswer(answer(#"{"topic_name": 7, "name": "projects/p/registrations/r1/topicSubscriptions/news"}"#), subscribe)
        let broken = [
            #"{"topicName": "news""#, #"{"topicName": "news"} x"#, #"{"topicName" "news"}"#, #"{"a": [1,]}"#, #"{topicName: "news"}"#, "{}}",
        ]
        for broken in broken {
            #expect(throws: FCMServiceError.self, "\(broken)") { try FCMHTTPService.checkChangeAnswer(answer(broken), subscribe) }
        }
        #expect(throws: FCMServiceError.self) {
            try FCMHTTPService.checkChangeAnswer(answer(#"{"name": "projects/p/registrations/r1/topicSubscriptions/sports"}"#), subscribe)
        }
        // Names are compared where they lie, escaped ones once decoded; the error quotes the name given.
        try FCMHTTPService.checkChangeAnswer(answer(#"{"topicName": "ne\u0077s"}"#), subscribe)
        try FCMHTTPService.checkChangeAnswer(answer(#"{"name": "projects/p/registrations/r1/topicSubscriptions/news/"}"#), subscribe)
        try FCMHTTPService.checkChangeAnswer(answer(#"{"topicName": "news", "topicName": "news"}"#), subscribe)
        // `topic_name`, present, decides over `topicName`; present but not text, it leaves the choice to `name`.
        try FCMHTTPService.checkChangeAnswer(answer(#"{"topic_name": null, "topicName": "sports"}"#), subscribe)
        try FCMHTTPService.checkChangeAnswer(answer(#"{"topic_name": null, "topicName": "sports", "name": "p/news"}"#), subscribe)
        #expect(throws: FCMServiceError.self) {
            try FCMHTTPService.checkChangeAnswer(answer(#"{"topic_name": 1, "topicName": "news", "name": "p/sports"}"#), subscribe)
        }
        #expect(throws: FCMServiceError.self) {
            try FCMHTTPService.checkChangeAnswer(answer(#"{"topicName": "sports", "name": "p/news"}"#), subscribe)
        }
        try FCMHTTPService.checkChangeAnswer(answer(#"{"name": "///"}"#), subscribe)
        // A surrogate pair with no low half is refused, not computed with (it stopped the process before).
        for escape in [#"\ud800\u0041"#, #"\ud800\ue000"#, #"\udc00"#, #"\ud800"#] {
            #expect(throws: FCMServiceError.self, "\(escape)") {
                try FCMHTTPService.checkChangeAnswer(answer(#"{"x": ""# + escape + #"", "topicName": "news"}"#), subscribe)
            }
        }
        try FCMHTTPService.checkChangeAnswer(answer(#"{"x": "\ud83d\ude00", "topicName": "news"}"#), subscribe)
        do {
            try FCMHTTPService.checkChangeAnswer(answer(#"{"topic_name": "spo\"rts", "topicName": "news"}"#), subscribe)
            Issue.record("a create answered for another topic was taken as done")
        } catch let error as FCMServiceError {
            #expect(error.message.hasSuffix("names topic spo\"rts"))
        }
    }
}
