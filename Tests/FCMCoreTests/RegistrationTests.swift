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

    @Test func orderIsTheValuesOrderWhateverTheInterningOrder() {
        // Interned out of order, so a handle's number says nothing of where its value sorts.
        let values = ["b:APA91b2", "a", "b:APA91b10", "", "b:APA91b1", "ab", "B", "b"]
        let registrations = values.map { Registration(value: $0, kind: .token) }
        #expect(registrations.sorted().map(\.value) == values.sorted())
        #expect(Registration(value: "", kind: .token).value.isEmpty)
        // Same value, two kinds: an order all the same, token first, so sorting is deterministic.
        let token = Registration(value: "same", kind: .token)
        let fid = Registration(value: "same", kind: .fid)
        #expect(token < fid && !(fid < token))
    }

    @Test func manyRegistrationsFromManyThreadsInternToOneHandleEach() async {
        // Enough to grow the index several times and fill more than one chunk of records and of bytes.
        let values = (0..<150_000).map { "grow-\($0):APA91b" + String(repeating: "q", count: $0 % 200) }
        let handles = await withTaskGroup(of: [Registration].self) { group in
            for part in 0..<4 {
                group.addTask { stride(from: part, to: values.count, by: 4).map { Registration(value: values[$0], kind: .token) } }
            }
            var all: [Registration] = []
            for await some in group { all += some }
            return all
        }
        #expect(Set(handles).count == values.count)
        let again = values.map { Registration(value: $0, kind: .token) }
        #expect(Set(again) == Set(handles))
        #expect(again.enumerated().allSatisfy { $0.element.value == values[$0.offset] && $0.element.kind == .token })
        let long = String(repeating: "L", count: 200_000)
        #expect(Registration(value: long, kind: .token).value == long)
    }

    @Test func bytesAndStringsInternAlike() {
        let value = "cR1rjyj4_KcAPA91bGusQ9"
        let fromBytes = Array(value.utf8).withUnsafeBytes { Registration(utf8: $0, kind: .fid) }
        #expect(fromBytes == Registration(value: value, kind: .fid))
        #expect(fromBytes.withUTF8 { Array($0) } == Array(value.utf8))
    }
}
