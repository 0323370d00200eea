import FCMCore
import Testing

@Suite struct RegistrationTests {
    @Test(arguments: [
        ("cR1rjyj4_KcAPA91bGusQ2", Registration.Kind.fid),
        ("fGw0qy4TGgk:APA91bHun4MxP5egoKMwt2KZFBaFUH", .token),
        ("aR1rjyj4_KcAPA91bGusQ2", .token),  // FIDs start with c, d, e or f
        ("cR1rjyj4_KcAPA91bGusQ", .token),  // 21 characters
    ])
    func kindIsInferredFromShape(value: String, kind: Registration.Kind) {
        #expect(Registration(inferring: value).kind == kind)
    }

    @Test func formatProblems() {
        #expect(Registration.formatProblem("") != nil)
        #expect(Registration.formatProblem("a b") != nil)
        #expect(Registration.formatProblem(String(repeating: "x", count: 4097)) != nil)
        #expect(Registration.formatProblem("ok:APA91b") == nil)
    }

    @Test func redaction() {
        let redact = Redactor(showTokens: false)
        #expect(redact.redact("fGw0qy4TGgk:APA91bHun4MxP5eg") == "fGw0qy…P5eg")
        #expect(redact.redact("short") == "shor…")
        #expect(Redactor(showTokens: true).redact("fGw0qy4TGgk:APA91bHun4MxP5eg") == "fGw0qy4TGgk:APA91bHun4MxP5eg")
    }
}
