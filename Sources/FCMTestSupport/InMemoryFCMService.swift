import FCMCore
import Foundation

/// FCM in memory, following the wire reference's rules (groups of 1...20 that vanish when emptied, a new
/// key on every read, 409-free idempotent subscriptions, gone registrations) so that every command can run
/// in-process against it. The contract suite holds it to the same behaviour as fcm-emulator.
package final class InMemoryFCMService: FCMService, @unchecked Sendable {
    package struct Request: Hashable, Sendable {
        package var method: String
        package var what: String
    }

    private let lock = NSLock()
    private var groups: [String: Set<Registration>] = [:]
    private var topics: [Registration: Set<String>] = [:]
    private var gone: Set<Registration> = []
    private var failing: [Registration: FCMServiceError] = [:]
    private var failingSubscribes: [String: (Set<Registration>, FCMServiceError)] = [:]
    private var keyCounter = 0
    private var log: [Request] = []
    package let topicBatchSize: Int
    /// Whether group members can be listed: FCM documents no way, so only as an operator's opt-in probe.
    package let exportsMembers: Bool

    package init(topicBatchSize: Int = 1, exportsMembers: Bool = false) {
        self.topicBatchSize = topicBatchSize
        self.exportsMembers = exportsMembers
    }

    // MARK: What tests set up and look at

    /// The app uninstalled: its subscriptions vanish and groups drop it (an emptied group is deleted).
    package func uninstall(_ registration: Registration) {
        lock.withLock {
            gone.insert(registration)
            topics[registration] = nil
            for (name, members) in groups where members.contains(registration) {
                groups[name] = members.subtracting([registration])
                if groups[name]!.isEmpty { groups[name] = nil }
            }
        }
    }

    /// Every request touching `registration` fails with `error`.
    package func fail(_ registration: Registration, with error: FCMServiceError) { lock.withLock { failing[registration] = error } }

    /// Subscribing any of `registrations` to `topic` fails with `error` (reads still work).
    package func failSubscribes(to topic: String, of registrations: Set<Registration>, with error: FCMServiceError) {
        lock.withLock { failingSubscribes[topic] = (registrations, error) }
    }

    package func clearFailures() {
        lock.withLock {
            failing = [:]
            failingSubscribes = [:]
        }
    }

    /// A subscription made by someone else (an app), outside fcmctl.
    package func subscribe(_ registration: Registration, to topic: String) {
        _ = lock.withLock { topics[registration, default: []].insert(topic) }
    }

    package func unsubscribe(_ registration: Registration, from topic: String) {
        _ = lock.withLock { topics[registration]?.remove(topic) }
    }

    package func deleteGroup(_ name: String) { _ = lock.withLock { groups.removeValue(forKey: name) } }

    package func members(of group: String) -> Set<Registration>? { lock.withLock { groups[group] } }
    package func topics(of registration: Registration) -> Set<String> { lock.withLock { topics[registration] ?? [] } }
    package var subscriptionCount: Int { lock.withLock { topics.values.reduce(0) { $0 + $1.count } } }
    package var requests: [Request] { lock.withLock { log } }
    package var mutatingRequests: [Request] { requests.filter { $0.method != "GET" } }

    // MARK: FCMService

    private func record(_ method: String, _ what: String) { log.append(Request(method: method, what: what)) }

    package func groupKey(name: String) async throws -> String? {
        lock.withLock {
            record("GET", "\(Address.group(name)) key")
            guard groups[name] != nil else { return nil }
            keyCounter += 1
            return "key:\(keyCounter):\(name)"
        }
    }

    package func groupMembers(name: String, key: String) async throws -> Set<Registration>? {
        guard exportsMembers else { return nil }
        return try lock.withLock {
            record("GET", "\(Address.group(name)) members")
            guard key.hasSuffix(":\(name)"), let members = groups[name] else {
                throw FCMServiceError(status: 400, code: "notification_key not found", message: "exporting the members of \(Address.group(name))")
            }
            return members
        }
    }

    package func performGroupStep(_ step: GroupStep, name: String, key: String?) async throws -> String? {
        try lock.withLock {
            record("POST", "\(Address.group(name)) \(step.operation) \(step.registrations.count)")
            let valid = step.registrations.filter { !gone.contains($0) }
            func refuse(_ message: String) -> FCMServiceError {
                FCMServiceError(
                    status: 400, code: message, message: "\(Address.group(name)) \(step.operation): \(message)",
                    refusal: message == "no valid registration ids" ? .noValidRegistrations : nil)
            }
            switch step {
            case .create:
                guard groups[name] == nil else { throw refuse("notification_key already exists") }
                guard !valid.isEmpty else { throw refuse("no valid registration ids") }
                guard valid.count <= 20 else { throw refuse("maximum number of members allowed for a notification key exceeded") }
                groups[name] = Set(valid)
            case .add:
                guard let key, key.hasSuffix(":\(name)"), let members = groups[name] else { throw refuse("notification_key not found") }
                guard !valid.isEmpty else { throw refuse("no valid registration ids") }
                guard members.union(valid).count <= 20 else { throw refuse("maximum number of members allowed for a notification key exceeded") }
                groups[name] = members.union(valid)
            case .remove:
                guard let key, key.hasSuffix(":\(name)"), let members = groups[name] else { throw refuse("notification_key not found") }
                let left = members.subtracting(step.registrations)
                groups[name] = left.isEmpty ? nil : left
            }
            keyCounter += 1
            return "key:\(keyCounter):\(name)"
        }
    }

    package func subscriptions(of registration: Registration) async throws -> RegistrationStatus {
        try lock.withLock {
            record("GET", "subscriptions")
            if let error = failing[registration] { throw error }
            if gone.contains(registration) { return .gone(reason: "NOT_FOUND") }
            return .active(topics: topics[registration] ?? [])
        }
    }

    package func perform(_ change: SubscriptionChange) async throws -> SubscriptionOutcome {
        try lock.withLock { try performLocked(change) }
    }

    private func performLocked(_ change: SubscriptionChange) throws -> SubscriptionOutcome {
        record(change.action == .subscribe ? "POST" : "DELETE", "\(Address.topic(change.topic))")
        if let error = failing[change.registration] { throw error }
        if change.action == .subscribe, let (who, error) = failingSubscribes[change.topic], who.contains(change.registration) { throw error }
        if gone.contains(change.registration) { return .registrationGone(reason: "NOT_FOUND") }
        switch change.action {
        case .subscribe:
            var current = topics[change.registration] ?? []
            if !current.contains(change.topic), current.count >= 2000 { return .failed(code: "TOO_MANY_TOPICS") }
            current.insert(change.topic)
            topics[change.registration] = current
        case .unsubscribe:
            topics[change.registration]?.remove(change.topic)
        }
        return .done
    }

    package func performBatch(topic: String, action: SubscriptionChange.Action, _ registrations: [Registration]) async throws
        -> [Registration: SubscriptionOutcome]
    {
        try lock.withLock {
            var outcomes: [Registration: SubscriptionOutcome] = [:]
            for registration in registrations {
                outcomes[registration] = try performLocked(SubscriptionChange(topic: topic, registration: registration, action: action))
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
