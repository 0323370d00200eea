import FCMCore
import FCMEngine
import Testing

/// The refusal of a state bound to another project, as a person reads it.
@Suite struct ProjectRefusalTests {
    let dev = ProjectBinding(id: "acme-dev", senderId: "111")
    let prod = ProjectBinding(id: "acme-prod", senderId: "222")

    @Test func theRefusalNamesBothProjectsAndWhatToDo() throws {
        #expect(ProjectBinding().refusal(manifest: prod, state: "s.json") == nil)
        let reason = try #require(dev.refusal(manifest: prod, state: "fcm/dev/.fcmctl/state.json"))
        #expect(reason.contains("the state fcm/dev/.fcmctl/state.json belongs to project acme-dev (sender 111)"), "\(reason)")
        #expect(reason.contains("the manifest is for project acme-prod (sender 222)"), "\(reason)")
        #expect(reason.contains("--state PATH") && reason.contains("Nothing was read from FCM or sent"), "\(reason)")
    }
}
