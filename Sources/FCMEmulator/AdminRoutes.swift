import Foundation

/// `/emulator/v1/…`: what tests and demos use to seed, inspect and reset the emulator. Not part of FCM.
struct AdminRoutes {
    let store: EmulatorStore

    func handle(_ request: EmulatorRequest) async -> EmulatorResponse? {
        let s = request.segments
        guard s.count >= 3, s[0] == "emulator", s[1] == "v1" else { return nil }
        switch (request.method, Array(s[2...])) {
        case ("GET", ["state"]):
            return await store.stateDump()
        case ("POST", ["reset"]):
            await store.reset()
            return .json(200, [String: Any]())
        case ("POST", ["registrations"]):
            return await register(request)
        case ("DELETE", let rest) where rest.count == 2 && rest[0] == "registrations":
            return await store.uninstall(rest[1])
                ? .json(200, [String: Any]()) : .rpcError(404, "no such registration: register it first")
        case ("GET", ["requests"]):
            let entries = await store.log.map { ["method": $0.method, "path": $0.path, "status": $0.status] as [String: Any] }
            return .json(200, ["requests": entries])
        default:
            return nil
        }
    }

    func register(_ request: EmulatorRequest) async -> EmulatorResponse {
        guard let items = request.jsonObject?["registrations"] as? [[String: Any]] else {
            return .rpcError(400, "expected {\"registrations\": [{\"token\": \"…\"} or {\"fid\": \"…\"}]}")
        }
        var count = 0
        for item in items {
            let kind = item["fid"] != nil ? "fid" : "token"
            guard let id = (item["fid"] ?? item["token"]) as? String, EmulatorStore.isWellFormed(id) else {
                return .rpcError(400, "registration \(count): needs a non-empty 'token' or 'fid' without whitespace")
            }
            await store.register(id, kind: kind)
            count += 1
        }
        return .json(200, ["registered": count])
    }
}
