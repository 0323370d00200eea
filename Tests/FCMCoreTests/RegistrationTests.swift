import FCMCore
import FCMTestSupport
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

    /// Text made of what registrations and their mistakes are made of: base64url, ':' at the usual place or
    /// elsewhere or twice, a neighbour of the alphabet ('.', '/', '~', ' '), and now and then beyond ASCII.
    static func randomText(_ generator: inout some RandomNumberGenerator) -> String {
        let alphabet = Array("-0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz")
        let count = [0, 1, 7, 8, 9, 11, 12, 22, 23, 152, 160, 163, 300][Int.random(in: 0..<13, using: &generator)]
        var characters = (0..<count).map { _ in alphabet.randomElement(using: &generator)! }
        // Low codes ('-', '0') at the end, so one value is often another's start followed by code 0.
        if count > 0, Bool.random(using: &generator) { characters[count - 1] = ["-", "0", "A"].randomElement(using: &generator)! }
        switch Int.random(in: 0..<8, using: &generator) {
        case 0, 1, 2: if count > 11 { characters[11] = ":" }
        case 3: if count > 0 { characters[Int.random(in: 0..<count, using: &generator)] = ":" }
        case 4:
            if count > 1 {
                characters[0] = ":"
                characters[count - 1] = ":"
            }
        case 5:
            if count > 0 { characters[Int.random(in: 0..<count, using: &generator)] = [".", "/", "~", " ", "é"].randomElement(using: &generator)! }
        case 6: if count >= 300 { characters[280] = ":" }
        default: break
        }
        return String(characters)
    }

    @Test func packedRegistrationsReadBackAndSortAsTheirText() {
        // Registrations are kept at 6 bits a character where the text allows: what comes back, and the order,
        // must be the text's whatever the form. A seeded generator, so a failure is found again.
        var generator = SeededGenerator(seed: 35)
        var values = (0..<4_000).map { _ in Self.randomText(&generator) }
        // Each value with a code-0 character appended: the same bytes but for padding, in the packed form.
        values += values.prefix(500).flatMap { [$0 + "-", $0 + "--", $0 + "0", String($0.dropLast())] }
        values += ["abcdefgh", "abcdefgh-", "abcdefgh--", "abcdefgh-A", "abcdefghij:APA91b", "abcdefghij:APA91b-", "abcdefghijk:APA91b"]
        let registrations = values.map { Registration(value: $0, kind: .token) }
        for (registration, value) in zip(registrations, values) {
            #expect(registration.value == value)
            #expect(registration.withUTF8 { Array($0) } == Array(value.utf8))
            #expect(Registration(value: value, kind: .token) == registration)
            #expect(Registration(existing: value, kind: .token) == registration)
        }
        let byText = { (lhs: String, rhs: String) in lhs.utf8.lexicographicallyPrecedes(rhs.utf8) }
        #expect(registrations.sorted().map(\.value) == values.sorted(by: byText))
        for _ in 0..<20_000 {
            let a = registrations.randomElement(using: &generator)!
            let b = registrations.randomElement(using: &generator)!
            #expect((a < b) == byText(a.value, b.value), "\(a.value) < \(b.value)")
        }
        // Two values that differ only in where the ':' stands are two registrations.
        let colonEarly = Registration(value: "abcdefghij:klmnopq", kind: .token)
        let colonLate = Registration(value: "abcdefghijk:lmnopq", kind: .token)
        #expect(colonEarly != colonLate && colonEarly < colonLate)
    }

    @Test func theLengthKnownWithoutTheTextIsTheTextsLength() {
        let values = [
            "fGw0qy4TGgk:APA91bHk3Zx_Lq0Wd2A" + String(repeating: "x", count: 120), "cR1rqZ0FqkyTJaVpWxyZ12", "é:naïve", "a", "",
            "short:tok", String(repeating: "z", count: 4096),
        ]
        for value in values {
            for kind in [Registration.Kind.token, .fid] {
                let registration = Registration(value: value, kind: kind)
                #expect(registration.utf8Count == value.utf8.count, "\(value.prefix(20))")
            }
        }
    }

    /// Packed registrations are unpacked straight into the URL; the result must be what escaping their text gives,
    /// wherever the ':' is (or with none), at every length packing handles, and for text kept as it is.
    @Test func urlComponentsMatchEscapingTheText() {
        var draws = Draws(seed: 35)
        var values = ["short", "a:b", ":APA91bHunvmxsRK5jPbx", "APA91bHunvmxsRK5jPbx:", "c1:é:APA91b", "two:colons:APA91bxyz", "with space:APA91b"]
        for length in [8, 9, 10, 11, 12, 63, 64, 65, 163, 254, 255, 256, 300, 4096] {
            for colon in [-1, 0, 1, length / 2, min(length - 1, 254), length - 1] {
                var bytes = (0..<length).map { _ in Draws.alphabet[draws.next(64)] }
                if colon >= 0 { bytes[colon] = UInt8(ascii: ":") }
                values.append(String(decoding: bytes, as: UTF8.self))
            }
        }
        for value in values {
            for kind in [Registration.Kind.token, .fid] {
                let registration = Registration(value: value, kind: kind)
                let written = [UInt8](unsafeUninitializedCapacity: 3 * value.utf8.count + 2) { out, count in
                    out[0] = UInt8(ascii: "/")
                    count = registration.writeURLComponent(into: out, at: 1)
                }
                #expect(String(decoding: written, as: UTF8.self) == "/" + URLComponentEncoder.encode(value), "\(value.prefix(40))")
            }
        }
    }
}

/// `sorted()` of registrations compares keys of their first bytes first; it must give exactly what `<` does.
@Suite struct RegistrationOrderTests {
    @Test func sortingByKeysGivesTheOrderOfTheTexts() {
        var draws = Draws(seed: 7)
        var values = ["", "a", "ab", "ab\u{0}", "ab\u{0}x", "abc:", ":abc", "é", "c1:APA91b", "c1:APA91", "c1:APA91bb", "c1;APA91b", "zzzzzzzzzz"]
        // Shared prefixes of every length around the 8 the key holds, packed (base64url with or without one ':')
        // and not (another byte in it), with the ':' before, inside and after the key's bytes.
        for _ in 0..<400 {
            let length = [1, 7, 8, 9, 12, 40, 163][draws.next(7)]
            var bytes = (0..<length).map { _ in Draws.alphabet[draws.next(4)] }
            if draws.next(2) == 0 { bytes[draws.next(length)] = UInt8(ascii: ":") }
            if draws.next(8) == 0 { bytes[draws.next(length)] = UInt8(ascii: "+") }
            values.append(String(decoding: bytes, as: UTF8.self))
        }
        let registrations = Set(values.flatMap { [Registration(value: $0, kind: .token), Registration(value: $0, kind: .fid)] })
        let expected = registrations.sorted(by: <)
        #expect(registrations.sorted() == expected)
        #expect(Array(registrations).sorted() == expected)
        #expect(expected.count == Set(values).count * 2)
    }
}

/// Numbers from a fixed seed (an LCG), so generated registrations are the same on every run; and the base64url
/// alphabet packed registrations are made of.
private struct Draws {
    static let alphabet = Array("-0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz".utf8)
    var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next(_ bound: Int) -> Int {
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        return Int((state >> 33) % UInt64(bound))
    }
}
