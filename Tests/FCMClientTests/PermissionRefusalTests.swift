import FCMClient
import FCMCore
import Foundation
import Testing

/// A 403 for lack of an IAM permission names the permission and the role that grants it, and both projects
/// when the credentials are of another one.
@Suite struct PermissionRefusalTests {
    @Test(arguments: [
        (
            #"{"error":{"code":403,"status":"PERMISSION_DENIED","message":"x","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"IAM_PERMISSION_DENIED","metadata":{"permission":"cloudmessaging.topicSubscriptions.create"}}]}}"#,
            "cloudmessaging.topicSubscriptions.create"
        ),
        (
            #"{"error":{"code":403,"status":"PERMISSION_DENIED","message":"Permission 'cloudmessaging.topicSubscriptions.list' denied on resource '//cloudresourcemanager.googleapis.com/projects/p' (or it may not exist)."}}"#,
            "cloudmessaging.topicSubscriptions.list"
        ),
    ])
    func thePermissionIsReadFromEitherPlace(body: String, permission: String) {
        #expect(IAMAdvice.permission(in: Data(body.utf8)) == permission)
    }

    @Test(arguments: [
        #"{"error":{"code":403,"status":"PERMISSION_DENIED","message":"SenderId mismatch"}}"#,
        #"{"error":{"code":403,"message":"Permission '<script>' denied"}}"#,
        "<html>403</html>",
    ])
    func nothingElseIsTakenForOne(body: String) {
        #expect(IAMAdvice.permission(in: Data(body.utf8)) == nil)
    }

    @Test func theRoleAndBothProjectsAreNamed() {
        let project = ProjectSettings(id: "acme-dev", senderId: "1")
        let mixedUp = IAMAdvice.refusal(
            "cloudmessaging.topicSubscriptions.list", project: project, caller: ("fcmctl@acme-prod.iam.gserviceaccount.com", "acme-prod"))
        #expect(
            mixedUp
                == "the credentials (fcmctl@acme-prod.iam.gserviceaccount.com) lack the permission cloudmessaging.topicSubscriptions.list "
                + "in project 'acme-dev', which roles/firebasecloudmessaging.viewer (or roles/firebasecloudmessaging.admin) grants. The "
                + "manifest is for project 'acme-dev', but the credentials are an account of project 'acme-prod': use this "
                + "environment's credentials, check project.id, or grant that account the role in 'acme-dev'")
        let viewer = IAMAdvice.refusal("cloudmessaging.topicSubscriptions.create", project: project, caller: (nil, "acme-dev"))
        #expect(
            viewer
                == "the credentials lack the permission cloudmessaging.topicSubscriptions.create in project 'acme-dev', which "
                + "roles/firebasecloudmessaging.admin grants: grant that role to the account in 'acme-dev', or use credentials that have it")
    }
}

extension PermissionRefusalTests {
    /// The device-group and IID APIs answer in their own flat shape: the permission is read from the words.
    @Test func aFlatAnswerNamesItsPermissionToo() {
        let body =
            #"{"error":"Permission 'cloudmessaging.topicSubscriptions.create' denied on resource "#
            + #"'//cloudresourcemanager.googleapis.com/projects/111100000020' (or it may not exist)."}"#
        #expect(IAMAdvice.permission(in: Data(body.utf8)) == "cloudmessaging.topicSubscriptions.create")
        let text = IAMAdvice.groupRefusal(
            "cloudmessaging.topicSubscriptions.create", project: ProjectSettings(id: "acme-prod", senderId: "111100000020"), caller: (nil, nil))
        #expect(text.hasPrefix("FCM refused the device-group request for sender id '111100000020'"))
        #expect(text.contains("Check that project.senderId is the project number of 'acme-prod'"))
    }
}
