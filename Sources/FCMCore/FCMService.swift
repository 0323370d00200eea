/// The requests fcmctl makes of FCM, as the domain sees them. The live implementation is in FCMClient;
/// tests use in-memory ones. Keys returned here are only good for the next call (wire reference §0.6).
package protocol FCMService: Sendable {
    /// The group's current key, or nil when FCM does not know the name.
    func groupKey(name: String) async throws -> String?
    /// The members FCM reports, or nil when it does not say: FCM documents no member list, so only an
    /// operator-enabled export probe answers (wire reference §3).
    func groupMembers(name: String, key: String) async throws -> Set<Registration>?
    /// Returns the key from FCM's answer, to use for the next step.
    func performGroupStep(_ step: GroupStep, name: String, key: String?) async throws -> String?
    func subscriptions(of registration: Registration) async throws -> RegistrationStatus
    func perform(_ change: SubscriptionChange) async throws -> SubscriptionOutcome
    /// How many registrations one request may change for one topic (1 on the v1 API, 1000 on IID).
    var topicBatchSize: Int { get }
    func performBatch(topic: String, action: SubscriptionChange.Action, _ registrations: [Registration]) async throws
        -> [Registration: SubscriptionOutcome]
    /// One registration's change of a batch: the same answer as `performBatch` with that one, without a list
    /// and a dictionary made for it (the v1 API's every change).
    func performOne(topic: String, action: SubscriptionChange.Action, _ registration: Registration) async throws -> SubscriptionOutcome?
    func previewBatch(topic: String, action: SubscriptionChange.Action, _ registrations: [Registration]) -> [RequestPreview]
    /// The exact requests `perform` would send, for `apply --dry-run`; registrations redacted by `redactor`.
    func preview(_ step: GroupStep, name: String, key: String?) -> [RequestPreview]
    func preview(_ change: SubscriptionChange) -> [RequestPreview]
}

extension FCMService {
    package func performOne(topic: String, action: SubscriptionChange.Action, _ registration: Registration) async throws
        -> SubscriptionOutcome?
    {
        try await performBatch(topic: topic, action: action, [registration])[registration]
    }
}

package enum SubscriptionOutcome: Hashable, Sendable {
    case done
    /// A create FCM refused with 409 ALREADY_EXISTS on its first answered attempt: the subscription was there
    /// before this run asked for it (made by someone else, or by a run whose record is lost), so it is not
    /// fcmctl's to record. After an attempt that went unanswered the same 409 may describe that attempt's
    /// work, and the client reports `done` instead.
    case alreadyExists
    /// The registration is gone (NOT_FOUND / UNREGISTERED / INVALID_ARGUMENT for this sender): drift, not retried.
    case registrationGone(reason: String)
    /// A per-registration failure inside a batch: FCM answered it and made no change (TOO_MANY_TOPICS, or a
    /// RESOURCE_EXHAUSTED / INTERNAL still answered after the client's retries). `message`: what happened, when
    /// the client has more to say than the code.
    case failed(code: String, message: String? = nil)
    /// Retried inside a batch, and the retry's request got no answer that says what became of it (a 5xx, a
    /// lost connection): FCM may have made the change, so it stays pending until a refresh reads FCM.
    case unsettled(code: String, message: String)

    /// The per-registration codes that say "retry" (Google's IID reference: "Retry the request", "Retry with
    /// exponential backoff").
    package static let retryableCodes: Set<String> = ["RESOURCE_EXHAUSTED", "INTERNAL"]
}

/// A request as it would be sent, registrations in full: the view that prints it redacts them.
package struct RequestPreview: Hashable, Sendable {
    package var method: String
    package var url: String
    package var body: String?
    /// The registrations the request names, so the view can redact them wherever they appear.
    package var registrations: [Registration]

    package init(method: String, url: String, body: String?, registrations: [Registration] = []) {
        self.method = method
        self.url = url
        self.body = body
        self.registrations = registrations
    }

    package var line: String { body.map { "\(method) \(url) \($0)" } ?? "\(method) \(url)" }
}

/// A failure FCM reported that a person should read: it carries the address of the object involved.
package struct FCMServiceError: Error, Hashable, Sendable {
    /// Refusals the engine acts on. The client recognises them in FCM's answer, so FCM's wording is read in
    /// one place and the engine matches a case, not text.
    package enum Refusal: Hashable, Sendable {
        /// A group step none of whose registrations FCM still accepts: they may be gone (uninstalled, expired),
        /// which the engine finds out and plans around.
        case noValidRegistrations
        /// The caller's credentials lack an IAM permission in the project: no other request of the run can
        /// fare better, so the run stops, naming the permission and the role that grants it.
        case permissionDenied(permission: String)
    }

    package var status: Int
    package var code: String
    package var message: String
    package var refusal: Refusal?

    /// The credentials lack an IAM permission in the project (not one registration's trouble).
    package var deniesPermission: Bool {
        if case .permissionDenied = refusal { return true }
        return false
    }

    package init(status: Int, code: String, message: String, refusal: Refusal? = nil) {
        self.status = status
        self.code = code
        self.message = message
        self.refusal = refusal
    }

}
