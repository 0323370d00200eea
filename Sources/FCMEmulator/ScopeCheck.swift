import Foundation

/// Google issues a token for whatever scopes are asked for; it is the API that refuses a valid token whose
/// scopes do not cover it, with 403 PERMISSION_DENIED and an ErrorInfo ACCESS_TOKEN_SCOPE_INSUFFICIENT.
/// Every FCM API (messages, both topic APIs, device groups) takes firebase.messaging or cloud-platform
/// (wire reference §1A, §1B, §5).
enum ScopeCheck {
    static let firebaseMessagingScope = "https://www.googleapis.com/auth/firebase.messaging"
    static let fcmScopes: Set<String> = [firebaseMessagingScope, TokenAuthority.cloudPlatformScope]

    /// The refusal for a token with `scopes` on `endpoint`, or nil when it may go on. Nil scopes (a static
    /// token) and the token services themselves pass. IAM Credentials is not checked either [UNCERTAIN]: the
    /// emulator keeps no IAM policy, and its callers' scopes (iam, cloud-platform) are not modelled.
    static func refusal(_ endpoint: Endpoint, scopes: Set<String>?) -> EmulatorResponse? {
        guard let scopes, let method = methods[endpoint], scopes.isDisjoint(with: fcmScopes) else { return nil }
        let service = endpoint.rawValue.hasPrefix("iid.") ? "iid.googleapis.com" : "fcm.googleapis.com"
        let info: [String: Any] = [
            "@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "ACCESS_TOKEN_SCOPE_INSUFFICIENT", "domain": "googleapis.com",
            "metadata": ["service": service, "method": method],
        ]
        // Google's front end answers before the API's own code runs, so every API family gets the same
        // google.rpc.Status shape, even the device-group and IID APIs whose own errors are flat [UNCERTAIN].
        return .json(
            403,
            [
                "error": [
                    "code": 403, "message": "Request had insufficient authentication scopes.", "status": "PERMISSION_DENIED",
                    "details": [info],
                ] as [String: Any]
            ])
    }

    /// ErrorInfo's `metadata.method`: the gRPC method behind each endpoint. Only SendMessage is FCM's
    /// published v1 method name; the others are [UNCERTAIN] stand-ins in the same style, kept in this one table.
    static let methods: [Endpoint: String] = [
        .messagesSend: "google.firebase.fcm.v1.FcmService.SendMessage",
        .topicsCreate: "google.firebase.fcm.v1.TopicSubscriptionService.CreateTopicSubscription",
        .topicsGet: "google.firebase.fcm.v1.TopicSubscriptionService.GetTopicSubscription",
        .topicsList: "google.firebase.fcm.v1.TopicSubscriptionService.ListTopicSubscriptions",
        .topicsPatch: "google.firebase.fcm.v1.TopicSubscriptionService.UpdateTopicSubscription",
        .topicsDelete: "google.firebase.fcm.v1.TopicSubscriptionService.DeleteTopicSubscription",
        .groupsMutate: "google.firebase.fcm.DeviceGroups.Mutate",
        .groupsGet: "google.firebase.fcm.DeviceGroups.Get",
        .groupsExport: "google.firebase.fcm.DeviceGroups.Export",
        .iidBatchAdd: "google.iid.v1.InstanceIdService.BatchAdd",
        .iidBatchRemove: "google.iid.v1.InstanceIdService.BatchRemove",
        .iidInfo: "google.iid.v1.InstanceIdService.GetInfo",
        .iidRelation: "google.iid.v1.InstanceIdService.CreateRelation",
    ]
}
