import Testing

@testable import FCMEmulator

@Suite struct RequestGuardTests {
    let loopback = RequestGuard(boundHost: "127.0.0.1", allowedHosts: ["fcm-emulator"])
    let everywhere = RequestGuard(boundHost: "0.0.0.0", allowedHosts: [])

    func reason(_ guardian: RequestGuard, _ method: String, _ path: String, _ headers: [String: String]) -> RequestGuard.Reason? {
        guardian.refusal(method: method, path: path, headers: headers)?.0
    }

    func reason(_ guardian: RequestGuard, _ headers: [String: String]) -> RequestGuard.Reason? {
        reason(guardian, "GET", "/emulator/v1/state", headers)
    }

    @Test(arguments: [
        ("127.0.0.1:9595", true), ("localhost", true), ("LOCALHOST:1", true), ("[::1]:9595", true), ("127.9.9.9", true),
        ("fcm-emulator:9595", true), ("attacker.example", false), ("attacker.example:9595", false), ("10.0.0.1", false),
        ("[::2]", false), ("0x7f000001", false), ("localhost.attacker.example", false), ("", false),
    ])
    func hostsOfALoopbackEmulator(host: String, accepted: Bool) {
        #expect((reason(loopback, ["host": host]) == nil) == accepted)
    }

    @Test(arguments: [("10.1.2.3", true), ("[fe80::1]:80", true), ("192.168.0.1:9595", true), ("fcm-emulator", false), ("a.b", false)])
    func boundToEveryInterfaceAnyAddressIsItsOwn(host: String, accepted: Bool) {
        #expect((reason(everywhere, ["host": host]) == nil) == accepted)
    }

    @Test func aRequestWithoutHostIsNoBrowsersAndPasses() {
        #expect(reason(loopback, [:]) == nil)
    }

    @Test(arguments: [
        ("http://127.0.0.1:9595", true), ("http://localhost:9595", true), ("http://[::1]:9595", true), ("http://127.0.0.1:9596", false),
        ("http://localhost", false), ("null", false), ("http://attacker.example:9595", false), ("http://127.0.0.1:9595/x", false),
        ("file://", false),
    ])
    func originsOfAChange(origin: String, accepted: Bool) {
        let headers = ["host": "127.0.0.1:9595", "origin": origin, "content-type": "application/json"]
        #expect((reason(loopback, "POST", "/emulator/v1/reset", headers) == nil) == accepted)
        #expect(reason(loopback, "GET", "/emulator/v1/state", headers) == nil, "a read is not refused for its Origin")
    }

    @Test func anOriginUnderTheHostsOwnNameIsItsOwnBehindAMappedPort() {
        let headers = ["host": "fcm-emulator:8080", "origin": "http://fcm-emulator:8080", "content-type": "application/json"]
        #expect(reason(loopback, "PUT", "/emulator/v1/clock", headers) == nil)
    }

    @Test(arguments: [
        ("application/json", nil), ("Application/JSON; charset=utf-8", nil), ("text/plain", RequestGuard.Reason.contentType),
        ("application/x-www-form-urlencoded", .contentType), ("multipart/form-data; boundary=x", .contentType),
        ("application/jsonx", .contentType), ("", .contentType),
    ])
    func adminChangesAreJSON(type: String, expected: RequestGuard.Reason?) {
        #expect(reason(loopback, "POST", "/emulator/v1/reset", ["host": "localhost", "content-type": type]) == expected)
        #expect(reason(loopback, "DELETE", "//%65mulator/v1/registrations/x", ["host": "localhost", "content-type": type]) == expected)
        // FCM's own endpoints keep whatever type their clients send.
        #expect(reason(loopback, "POST", "/v1/projects/p/messages:send", ["host": "localhost", "content-type": type]) == nil)
    }

    @Test func noPreflightIsAllowed() {
        #expect(reason(loopback, "OPTIONS", "/emulator/v1/reset", ["host": "localhost", "origin": "http://localhost:1"]) == .preflight)
        let answer = loopback.refusal(method: "OPTIONS", path: "/emulator/v1/reset", headers: ["host": "localhost"])?.1
        #expect(answer?.status == 403 && answer?.extraHeaders.isEmpty == true)
    }

    @Test func allowedHostValues() {
        for good in ["fcm-emulator", "emu.internal", "10.0.0.5", "::1", "[::1]", "*"] { #expect(RequestGuard.isAllowedHostValue(good), "\(good)") }
        for bad in ["fcm-emulator:9595", "http://x", "a b", "", "x/y"] { #expect(!RequestGuard.isAllowedHostValue(bad), "\(bad)") }
    }

    @Test func quotedTextCannotMoveATerminal() {
        #expect(Quoted.text("a\u{1B}[2J\u{7}b\u{202E}\"\\") == #""a\u{1b}[2J\u{7}b\u{202e}\"\\""#)
        #expect(Quoted.text(String(repeating: "x", count: 100)).hasSuffix("x…\""))
    }
}
