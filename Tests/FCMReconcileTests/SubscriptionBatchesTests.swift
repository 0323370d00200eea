import FCMCore
import FCMReconcile
import Testing

@Suite struct SubscriptionBatchesTests {
    func registrations(_ prefix: String, _ count: Int) -> [Registration] {
        (0..<count).map { Registration(value: "\(prefix)-\($0):APA91b", kind: .token) }
    }

    @Test func batchesAreSlicesOfEachTopicsListInOrder() {
        let news = registrations("news", 5)
        let sport = registrations("sport", 3)
        let topics = [
            TopicChange(name: "news", ownership: .additive, added: news, removed: [], unchanged: 0),
            TopicChange(name: "quiet", ownership: .additive, added: [], removed: [], unchanged: 0),
            TopicChange(name: "sport", ownership: .additive, added: sport, removed: registrations("old", 2), unchanged: 0),
        ]
        let batches = Applier.batches(topics, .subscribe, size: 2)
        // news: 2 + 2 + 1, sport: 2 + 1; the empty topic makes none.
        #expect(batches.count == 5)
        #expect(batches.reduce(0) { $0 + $1.registrations.count } == 8)
        #expect(batches.map(\.topic) == ["news", "news", "news", "sport", "sport"])
        #expect(batches.map { Array($0.registrations) } == [Array(news[0..<2]), Array(news[2..<4]), [news[4]], Array(sport[0..<2]), [sport[2]]])
        #expect(batches.map { batches.firstOperation(of: batches.firstIndex(of: $0)!) } == [0, 2, 4, 5, 7])
        #expect(batches[3].address == .topic("sport") && batches[3].action == .subscribe)
        // What is left from the fourth batch on: the rest of sport, one part.
        let rest = batches.remaining(from: 2)
        #expect(rest.map(\.topic) == ["news", "sport"])
        #expect(rest.map { Array($0.registrations) } == [[news[4]], sport])
        #expect(batches.remaining(from: 5).isEmpty)
        let removals = Applier.batches(topics, .unsubscribe, size: 1000)
        #expect(removals.count == 1 && removals[0].registrations.count == 2 && removals[0].action == .unsubscribe)
    }

    @Test func aMillionSingleChangesCostNoBatchStorage() {
        let members = registrations("fleet", 500)
        let topics = (0..<2000).map { TopicChange(name: "t\($0)", ownership: .additive, added: members, removed: [], unchanged: 0) }
        let batches = Applier.batches(topics, .subscribe, size: 1)
        #expect(batches.count == 1_000_000)
        #expect(batches[999_999].topic == "t1999" && batches[999_999].registrations.first == members[499])
        #expect(batches.firstOperation(of: 500_123) == 500_123)
    }
}
