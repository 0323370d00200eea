import Foundation

/// `https://fcm.googleapis.com/fcm/notification`: the deprecated device-group API (wire reference §3).
struct DeviceGroupRoutes {
    let store: EmulatorStore
    /// `--group-export`: serve the member export the emulator invented. Google's migration page says such a
    /// GET exists but no public source gives its URL or answer, so it is off unless a test asks for it.
    var exportEnabled = false
    /// [GUESS] Whether a FID is taken where the page names registration tokens (`--accept-legacy-fids`); by
    /// default it is dropped like any invalid registration token.
    var acceptsFIDs = false

    static let memberLimit = 20
    static let errorAlreadyExists = "notification_key already exists"
    static let errorNoValidIDs = "no valid registration ids"
    static let errorNameMismatch = "notification_key_name doesn't match the group name of the notification_key"
    static let errorNotFound = "notification_key not found"
    /// [UNCERTAIN] The real string and status for exceeding 20 members were not found (wire reference §3);
    /// this is a guess kept in one place.
    static let errorTooManyMembers = "maximum number of members allowed for a notification key exceeded"
    static let exportPath = ["fcm", "notification", "export"]

    /// [DOC] the device-group and IID pages list `access_token_auth: true` among the headers an OAuth 2.0
    /// caller sends; [GUESS] FCM's answer without it is unrecorded: a 401 here.
    static func missingAccessTokenAuth(_ request: EmulatorRequest) -> EmulatorResponse? {
        guard request.headers["access_token_auth"]?.lowercased() != "true" else { return nil }
        return .flatError(401, "the access_token_auth: true header is required with an OAuth 2.0 access token")
    }

    func handle(_ request: EmulatorRequest) async -> EmulatorResponse? {
        guard ["fcm"] == request.segments.prefix(1) else { return nil }
        if let refusal = Self.missingAccessTokenAuth(request) { return refusal }
        switch (request.method, request.segments) {
        case ("GET", ["fcm", "notification"]): return await getKey(request)
        case ("POST", ["fcm", "notification"]): return await mutate(request)
        case ("GET", Self.exportPath):
            guard exportEnabled else {
                return .flatError(404, "fcm-emulator does not serve the unconfirmed member export unless started with --group-export")
            }
            return await export(request)
        default: return nil
        }
    }

    func senderID(_ request: EmulatorRequest) -> String? {
        guard let sender = request.headers["project_id"], !sender.isEmpty else { return nil }
        return sender
    }

    func getKey(_ request: EmulatorRequest) async -> EmulatorResponse {
        guard let sender = senderID(request) else { return .flatError(400, "project_id header is required") }
        guard let name = request.query["notification_key_name"], !name.isEmpty else {
            return .flatError(400, "notification_key_name is required")
        }
        guard let group = await store.group(named: .init(senderId: sender, name: name)) else {
            return .flatError(400, Self.errorNotFound)
        }
        return .json(200, ["notification_key": NotificationKeyCodec.encode(groupID: group.id)])
    }

    /// [UNCERTAIN] shape: the 2026 docs name a member export API without its URL (wire reference §3).
    func export(_ request: EmulatorRequest) async -> EmulatorResponse {
        guard let key = request.query["notification_key"], let id = NotificationKeyCodec.decode(key),
            let (_, group) = await store.group(id: id)
        else { return .flatError(400, Self.errorNotFound) }
        return .json(200, ["registration_ids": group.members])
    }

    func mutate(_ request: EmulatorRequest) async -> EmulatorResponse {
        guard let sender = senderID(request) else { return .flatError(400, "project_id header is required") }
        guard let body = request.jsonObject else { return .flatError(400, "the request body must be a JSON object") }
        guard let operation = body["operation"] as? String else { return .flatError(400, "operation is required") }
        guard let ids = body["registration_ids"] as? [String] else { return .flatError(400, "registration_ids is required") }
        // [DOC] Table 10 requires notification_key_name for every operation (the prose calls it optional for
        // add and remove); the stricter reading is enforced.
        guard let name = body["notification_key_name"] as? String, !name.isEmpty else {
            return .flatError(400, "notification_key_name is required")
        }
        switch operation {
        case "create":
            return await create(GroupNameKey(sender: sender, name: name), ids: ids)
        case "add", "remove":
            guard let key = body["notification_key"] as? String, let id = NotificationKeyCodec.decode(key),
                let (groupName, group) = await store.group(id: id), groupName.senderId == sender
            else { return .flatError(400, Self.errorNotFound) }
            if name != groupName.name { return .flatError(400, Self.errorNameMismatch) }
            return await change(groupName, group: group, ids: ids, adding: operation == "add")
        default:
            return .flatError(400, "operation must be create, add or remove")
        }
    }

    struct GroupNameKey {
        var sender: String
        var name: String
    }

    /// [GUESS] another project's registration (and, unless accepted, a FID) is dropped like an invalid one; no
    /// source records FCM's answer.
    func validIDs(_ ids: [String], sender: String) async -> [String] {
        var valid: [String] = []
        for id in ids where await store.check(id, as: .sender(sender), refusingFIDs: !acceptsFIDs) == .valid && !valid.contains(id) {
            valid.append(id)
        }
        return valid
    }

    func create(_ key: GroupNameKey, ids: [String]) async -> EmulatorResponse {
        let name = EmulatorStore.GroupName(senderId: key.sender, name: key.name)
        if await store.group(named: name) != nil { return .flatError(400, Self.errorAlreadyExists) }
        // "Invalid registration tokens are dropped when a device group is successfully created."
        let members = await validIDs(ids, sender: key.sender)
        guard !members.isEmpty else { return .flatError(400, Self.errorNoValidIDs) }
        guard members.count <= Self.memberLimit else { return .flatError(400, Self.errorTooManyMembers) }
        guard let group = await store.createGroup(name, members: members) else {
            return .flatError(500, "fcm-emulator has no group id left: its imported next_group_id was the highest there is; reset it")
        }
        return .json(200, ["notification_key": NotificationKeyCodec.encode(groupID: group.id)])
    }

    func change(_ name: EmulatorStore.GroupName, group: EmulatorStore.GroupRecord, ids: [String], adding: Bool) async -> EmulatorResponse {
        let valid = await validIDs(ids, sender: name.senderId)
        guard !valid.isEmpty else { return .flatError(400, Self.errorNoValidIDs) }
        var members = group.members
        if adding {
            for id in valid where !members.contains(id) { members.append(id) }
            guard members.count <= Self.memberLimit else { return .flatError(400, Self.errorTooManyMembers) }
        } else {
            members.removeAll { valid.contains($0) }
        }
        // FCM deletes a group when its last member is removed.
        await store.setMembers(name, members)
        return .json(200, ["notification_key": NotificationKeyCodec.encode(groupID: group.id)])
    }
}
