import Foundation

/// The inspector, a page over the admin API for people with a browser, which can also act through the FCM
/// APIs the emulator serves: `GET /` and its three files under `/emulator/ui/`. The files are compiled in (InspectorAssets.swift), so the one release binary serves them.
///
/// `GET /` is also the GCE metadata server's root: a request carrying `Metadata-Flavor` (google-auth's and
/// fcmctl's detection ping) never gets the page, it goes on to the metadata server as before.
enum InspectorPage {
    static let scriptPath = "/emulator/ui/inspector.js"
    /// What the page can do (register, subscribe, group, send), apart from what it shows.
    static let actionsScriptPath = "/emulator/ui/actions.js"
    static let stylesheetPath = "/emulator/ui/inspector.css"

    /// Everything the page needs comes from the emulator; images in notifications may come from anywhere,
    /// as on a phone.
    static let contentSecurityPolicy =
        "default-src 'self'; img-src * data: blob:; script-src 'self'; style-src 'self'; connect-src 'self'; frame-ancestors 'none'"

    static func answer(_ request: EmulatorRequest) -> EmulatorResponse? {
        guard request.method == "GET" || request.method == "HEAD" else { return nil }
        switch request.path {
        case "/", "/index.html":
            guard request.headers["metadata-flavor"] == nil else { return nil }
            return file(InspectorAssets.html, type: "text/html; charset=utf-8")
        case scriptPath: return file(InspectorAssets.script, type: "text/javascript; charset=utf-8")
        case actionsScriptPath: return file(InspectorAssets.actionsScript, type: "text/javascript; charset=utf-8")
        case stylesheetPath: return file(InspectorAssets.stylesheet, type: "text/css; charset=utf-8")
        default: return nil
        }
    }

    static func file(_ text: String, type: String) -> EmulatorResponse {
        var answer = EmulatorResponse(status: 200, body: Data(text.utf8), contentType: type)
        answer.extraHeaders["Content-Security-Policy"] = contentSecurityPolicy
        answer.extraHeaders["X-Content-Type-Options"] = "nosniff"
        // A new emulator build serves new files under the same names: never run yesterday's script.
        answer.extraHeaders["Cache-Control"] = "no-cache"
        return answer
    }
}
