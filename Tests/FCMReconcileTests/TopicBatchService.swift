import FCMCore

/// A test service that only answers topic batches: groups, reads and previews answer nothing. The fakes of
/// this target conform and write `performBatch` alone.
protocol TopicBatchService: FCMService {}

extension TopicBatchService {
    var topicBatchSize: Int { 1 }
    func groupKey(name: String) async throws -> String? { nil }
    func groupMembers(name: String, key: String) async throws -> Set<Registration>? { nil }
    func performGroupStep(_ step: GroupStep, name: String, key: String?) async throws -> String? { "key" }
    func subscriptions(of registration: Registration) async throws -> RegistrationStatus { .active(topics: []) }
    func perform(_ change: SubscriptionChange) async throws -> SubscriptionOutcome { .done }
    func previewBatch(topic: String, action: SubscriptionChange.Action, _ registrations: [Registration]) -> [RequestPreview] { [] }
    func preview(_ step: GroupStep, name: String, key: String?) -> [RequestPreview] { [] }
    func preview(_ change: SubscriptionChange) -> [RequestPreview] { [] }
}
