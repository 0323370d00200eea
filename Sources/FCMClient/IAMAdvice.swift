import FCMCore
import Foundation

/// What to tell a person whose credentials FCM refused for lack of an IAM permission: the permission, the
/// role that grants it (https://cloud.google.com/iam/docs/roles-permissions/firebasecloudmessaging), and
/// both projects, since a refusal is most often credentials of one environment used with another's manifest.
package enum IAMAdvice {
    /// `roles/firebasecloudmessaging.viewer` grants `cloudmessaging.topicSubscriptions.{get,list}`; the
    /// admin role (and `roles/cloudmessaging.editor`) every FCM permission, sends included.
    package static func role(for permission: String) -> String {
        permission.hasSuffix(".get") || permission.hasSuffix(".list")
            ? "roles/firebasecloudmessaging.viewer (or roles/firebasecloudmessaging.admin)" : "roles/firebasecloudmessaging.admin"
    }

    package static func refusal(_ permission: String, project: ProjectSettings, caller: (account: String?, project: String?)) -> String {
        let who = caller.account.map { "the credentials (\($0))" } ?? "the credentials"
        var text = "\(who) lack the permission \(permission) in project '\(project.id)', which \(role(for: permission)) grants"
        if let theirs = caller.project, !theirs.isEmpty, theirs != project.id {
            text +=
                ". The manifest is for project '\(project.id)', but the credentials are an account of project '\(theirs)': "
                + "use this environment's credentials, check project.id, or grant that account the role in '\(project.id)'"
        } else {
            text += ": grant that role to the account in '\(project.id)', or use credentials that have it"
        }
        return text
    }

    /// Only permissions of the shape Google's IAM gives them (`service.resource.verb`), so nothing else an
    /// answer says is taken for one.
    package static func permission(in body: Data) -> String? {
        guard let object = try? JSONSerialization.jsonObject(with: body) as? [String: Any] else { return nil }
        var candidate: String?
        var message = object["error"] as? String
        if let error = object["error"] as? [String: Any] {
            let details = error["details"] as? [[String: Any]] ?? []
            let info = details.first { ($0["@type"] as? String)?.hasSuffix("google.rpc.ErrorInfo") == true }
            candidate = (info?["metadata"] as? [String: Any])?["permission"] as? String
            message = error["message"] as? String
        }
        // The device-group and IID APIs answer `{"error": "…"}`: the permission is only in the words.
        if candidate == nil, let message, let start = message.range(of: "Permission '"),
            let end = message[start.upperBound...].firstIndex(of: "'")
        {
            candidate = String(message[start.upperBound..<end])
        }
        guard let candidate, candidate.split(separator: ".").count == 3,
            candidate.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "." || $0 == "_" })
        else { return nil }
        return candidate
    }

    /// A device-group request names its project by sender id (`project_id`): refused, the sender id is as
    /// likely to be wrong as the credentials.
    package static func groupRefusal(_ permission: String, project: ProjectSettings, caller: (account: String?, project: String?)) -> String {
        let who = caller.account.map { "the credentials (\($0))" } ?? "the credentials"
        return "FCM refused the device-group request for sender id '\(project.senderId)': \(who) lack the permission \(permission) "
            + "there, which \(role(for: permission)) grants. Check that project.senderId is the project number of '\(project.id)' "
            + "(Firebase console, Project settings), and that the credentials are this environment's"
            + (caller.project.map { $0.isEmpty || $0 == project.id ? "" : " (they are of project '\($0)')" } ?? "")
    }
}
