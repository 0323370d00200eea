import Foundation

/// The emulator's idea of today, and whether the project is "new": so tests can run past FCM's turndown
/// dates and see the group and Instance ID endpoints answer as the real ones will (wire reference §0).
/// After 2027-09-29 both families answer 404 saying they were turned down; from 2026-12-01 a project
/// marked new may not create device groups. Set with `PUT /emulator/v1/clock`.
actor PlatformCalendar {
    static let groupsClosedToNewProjects = day(2026, 12, 1)
    static let turndown = day(2027, 9, 29)

    private(set) var fixedNow: Date?
    private(set) var newProject = false

    static func day(_ year: Int, _ month: Int, _ day: Int) -> Date {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        return calendar.date(from: DateComponents(year: year, month: month, day: day))!
    }

    var now: Date { fixedNow ?? Date() }

    /// What an export keeps of the clock.
    var clock: StateExport.Clock { .init(now: fixedNow, newProject: newProject) }

    func set(now: Date?, newProject: Bool) {
        fixedNow = now
        self.newProject = newProject
    }

    /// The refusal FCM would give this request on the current day, if any.
    func refusal(_ endpoint: Endpoint, _ request: EmulatorRequest) -> EmulatorResponse? {
        let today = now
        if endpoint.rawValue.hasPrefix("groups."), today >= Self.turndown {
            return .flatError(404, "device groups were turned down on 2027-09-29 and their data was not kept")
        }
        // [GUESS] the answer is unrecorded; with the groups gone, a notification key names nothing.
        if endpoint == .messagesSend, today >= Self.turndown, let message = request.jsonObject?["message"] as? [String: Any],
            let token = message["token"] as? String, NotificationKeyCodec.decode(token) != nil
        {
            return .rpcError(404, "Requested entity was not found.", fcmErrorCode: "UNREGISTERED")
        }
        if endpoint.rawValue.hasPrefix("iid."), today >= Self.turndown {
            return .flatError(404, "the Instance ID server API was turned down on 2027-09-29")
        }
        if endpoint == .groupsMutate, newProject, today >= Self.groupsClosedToNewProjects,
            request.jsonObject?["operation"] as? String == "create"
        {
            return .flatError(400, "device groups are not available to this project: new projects cannot onboard device groups after 2026-12-01")
        }
        return nil
    }

    /// What `GET /emulator/v1/clock` answers.
    var response: EmulatorResponse {
        .json(200, ["now": ISO8601DateFormatter().string(from: now), "fixed": fixedNow != nil, "new_project": newProject])
    }
}
