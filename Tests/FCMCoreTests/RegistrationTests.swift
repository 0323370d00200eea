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

    @Test func redaction() {
        let redact = Redactor(showTokens: false)
        #expect(redact.redact("fGw0qy4TGgk:APA91bHun4MxP5eg") == "fGw0qy…P5eg")
        #expect(redact.redact("short") == "shor…")
        #expect(Redactor(showTokens: true).redact("fGw0qy4TGgk:APA91bHun4MxP5eg") == "fGw0qy4TGgk:APA91bHun4MxP5eg")
        // Beyond ASCII the ends are characters, not bytes.
        #expect(redact.redact("éèêëēėęÿûüùúū-ñ") == "éèêëēė…úū-ñ")
        #expect(redact.redact("a\r\nbcdefghijklmnop") == "a\r\nbcde…mnop")
    }

    @Test func equalRegistrationsAreOneHandle() {
        // Built from separate strings, as the manifest, the state and FCM's answers each build them.
        let value = "fGw0qy4TGgk:APA91b" + String(repeating: "x", count: 140)
        let first = Registration(value: String(value.utf8.map { Character(UnicodeScalar($0)) }), kind: .token)
        let second = Registration(value: value, kind: .token)
        #expect(first == second)
        #expect(Set([first, second]).count == 1)
        #expect(first.value == value && second.kind == .token)
        // The same text as another kind is another registration, as before.
        #expect(Registration(value: value, kind: .fid) != first)
        #expect(Registration(value: value + "y", kind: .token) != first)
        #expect(Registration(value: "a", kind: .token) < Registration(value: "b", kind: .token))
        #expect(!(first < second) && !(second < first))
    }
}
