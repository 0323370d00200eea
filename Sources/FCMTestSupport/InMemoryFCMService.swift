import FCMCore
import Synchronization

/// FCM in memory, following the wire reference's rules (groups of 1...20 that vanish when emptied, a new
/// key on every read, "already exists" for a subscription held before on the v1 API, gone registrations) so that every command can run
/// in-process against it. The contract suite holds it to the same behaviour as fcm-emulator.
package final class InMemoryFCMService: FCMService, Sendable {
    package struct Request: Hashable, Sendable {
        package var method: String
        package var what: String
    }

    /// What FCM holds, and what tests arranged, behind one lock.
    private struct Memory {
        var groups: [String: Set<Registration>] = [:]
        var topics: [Registration: Set<String>] = [:]
        var gone: Set<Registration> = []
        var failing: [Registration: FCMServiceError] = [:]
        var failingSubscribes: [String: (Set<Registration>, FCMServiceError)] = [:]
        var keyCounter = 0
        var log: [Request] = []
        /// The v1 API answers a create of a held subscription 409 ALREADY_EXISTS; IID's batchAdd says nothing.
        var answersAlreadyExists = true

        mutating func record(_ method: String, _ what: String) { log.append(Request(method: method, what: what)) }

        mutating func perform(_ change: SubscriptionChange) throws -> SubscriptionOutcome {
            record(change.action == .subscribe ? "POST" : "DELETE", "\(Address.topic(change.topic))")
            if let error = failing[change.registration] { throw error }
            if change.action == .subscribe, let (who, error) = failingSubscribes[change.topic], who.contains(change.registration) { throw error }
            if gone.contains(change.registration) { return .registrationGone(reason: "NOT_FOUND") }
            switch change.action {
            case .subscribe:
                var current = topics[change.registration] ?? []
                if current.contains(change.topic), answersAlreadyExists { return .alreadyExists }
                if !current.contains(change.topic), current.count >= 2000 { return .failed(code: "TOO_MANY_TOPICS") }
                current.insert(change.topic)
                topics[change.registration] = current
            case .unsubscribe:
                topics[change.registration]?.remove(change.topic)
            }
            return .done
        }
    }

    private let memory = Mutex(Memory())
    package let topicBatchSize: Int
    /// Whether group members can be listed: FCM documents no way, so only as an operator's opt-in probe.
    package let exportsMembers: Bool

    package init(topicBatchSize: Int = 1, exportsMembers: Bool = false) {
        self.topicBatchSize = topicBatchSize
        self.exportsMembers = exportsMembers
        memory.withLock { $0.answersAlreadyExists = topicBatchSize == 1 }
    }

    // MARK: What tests set up and look at

    /// The app uninstalled: its subscriptions vanish and groups drop it (an emptied group is deleted).
    package func uninstall(_ registration: Registration) {
        memory.withLock { memory in
            memory.gone.insert(registration)
            memory.topics[registration] = nil
            for (name, members) in memory.groups where members.contains(registration) {
                memory.groups[name] = members.subtracting([registration])
                if memory.groups[name]!.isEmpty { memory.groups[name] = nil }
            }
        }
    }

    /// Every request touching `registration` fails with `error`.
    package func fail(_ registration: Registration, with error: FCMServiceError) { memory.withLock { $0.failing[registration] = error } }

    /// Subscribing any of `registrations` to `topic` fails with `error` (reads still work).
    package func failSubscribes(to topic: String, of registrations: Set<Registration>, with error: FCMServiceError) {
        memory.withLock { $0.failingSubscribes[topic] = (registrations, error) }
    }

    package func clearFailures() {
        memory.withLock {
            $0.failing = [:]
            $0.failingSubscribes = [:]
        }
    }

    /// A subscription made by someone else (an app), outside fcmctl.
    package func subscribe(_ registration: Registration, to topic: String) {
        _ = memory.withLock { $0.topics[registration, default: []].insert(topic) }
    }

    package func unsubscribe(_ registration: Registration, from topic: String) {
        _ = memory.withLock { $0.topics[registration]?.remove(topic) }
    }

    package func deleteGroup(_ name: String) { _ = memory.withLock { $0.groups.removeValue(forKey: name) } }

    package func members(of group: String) -> Set<Registration>? { memory.withLock { $0.groups[group] } }
    package func topics(of registration: Registration) -> Set<String> { memory.withLock { $0.topics[registration] ?? [] } }
    package var subscriptionCount: Int { memory.withLock { $0.topics.values.reduce(0) { $0 + $1.count } } }
    package var requests: [Request] { memory.withLock { $0.log } }
    package var mutatingRequests: [Request] { requests.filter { $0.method != "GET" } }

    // MARK: FCMService

    package func groupKey(name: String) async throws -> String? {
        memory.withLock { memory in
            memory.record("GET", "\(Address.group(name)) key")
            guard memory.groups[name] != nil else { return nil }
            memory.keyCounter += 1
            return "key:\(memory.keyCounter):\(name)"
        }
    }

    package func groupMembers(name: String, key: String) async throws -> Set<Registration>? {
        guard exportsMembers else { return nil }
        return try memory.withLock { memory in
            memory.record("GET", "\(Address.group(name)) members")
            guard key.hasSuffix(":\(name)"), let members = memory.groups[name] else {
                throw FCMServiceError(status: 400, code: "notification_key not found", message: "exporting the members of \(Address.group(name))")
            }
            return members
        }
    }

    package func performGroupStep(_ step: GroupStep, name: String, key: String?) async throws -> String? {
        try memory.withLock { memory in
            memory.record("POST", "\(Address.group(name)) \(step.operation) \(step.registrations.count)")
            let valid = step.registrations.filter { !memory.gone.contains($0) }
            func refuse(_ message: String) -> FCMServiceError {
                FCMServiceError(
                    status: 400, code: message, message: "\(Address.group(name)) \(step.operation): \(message)",
                    refusal: message == "no valid registration ids" ? .noValidRegistrations : nil)
            }
            switch step {
            case .create:
                guard memory.groups[name] == nil else { throw refuse("notification_key already exists") }
                guard !valid.isEmpty else { throw refuse("no valid registration ids") }
                guard valid.count <= 20 else { throw refuse("maximum number of members allowed for a notification key exceeded") }
                memory.groups[name] = Set(valid)
            case .add:
                guard let key, key.hasSuffix(":\(name)"), let members = memory.groups[name] else { throw refuse("notification_key not found") }
                guard !valid.isEmpty else { throw refuse("no valid registration ids") }
                guard members.union(valid).count <= 20 else { throw refuse("maximum number of members allowed for a notification key exceeded") }
                memory.groups[name] = members.union(valid)
            case .remove:
                guard let key, key.hasSuffix(":\(name)"), let members = memory.groups[name] else { throw refuse("notification_key not found") }
                let left = members.subtracting(step.registrations)
                memory.groups[name] = left.isEmpty ? nil : left
            }
            memory.keyCounter += 1
            return "key:\(memory.keyCounter):\(name)"
        }
    }

    package func subscriptions(of registration: Registration) async throws -> RegistrationStatus {
        try memory.withLock { memory in
            memory.record("GET", "subscriptions")
            if let error = memory.failing[registration] { throw error }
            if memory.gone.contains(registration) { return .gone(reason: "NOT_FOUND") }
            return .active(topics: memory.topics[registration] ?? [])
        }
    }

    package func perform(_ change: SubscriptionChange) async throws -> SubscriptionOutcome {
        try memory.withLock { try $0.perform(change) }
    }

    package func performBatch(topic: String, action: SubscriptionChange.Action, _ registrations: [Registration]) async throws
        -> [Registration: SubscriptionOutcome]
    {
        try memory.withLock { memory in
            var outcomes: [Registration: SubscriptionOutcome] = [:]
            for registration in registrations {
                outcomes[registration] = try memory.perform(SubscriptionChange(topic: topic, registration: registration, action: action))
            }
            return outcomes
        }
    }

    package func previewBatch(topic: String, action: SubscriptionChange.Action, _ registrations: [Registration]) -> [RequestPreview] {
        registrations.flatMap { preview(SubscriptionChange(topic: topic, registration: $0, action: action)) }
    }

    package func preview(_ step: GroupStep, name: String, key: String?) -> [RequestPreview] {
        [
            RequestPreview(
                method: "POST", url: "memory://\(Address.group(name))/\(step.operation)",
                body: step.registrations.map(\.value).joined(separator: ","),
                registrations: step.registrations)
        ]
    }

    package func preview(_ change: SubscriptionChange) -> [RequestPreview] {
        [
            RequestPreview(
                method: change.action == .subscribe ? "POST" : "DELETE", url: "memory://\(Address.topic(change.topic))/\(change.registration.value)",
                body: nil,
                registrations: [change.registration])
        ]
    }
}
