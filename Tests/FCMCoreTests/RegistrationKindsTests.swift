import Testing

@testable import FCMCore

@Suite struct RegistrationKindsTests {
    /// `asKind` skips the lookup when no registration of the other kind was ever interned; the table must say so
    /// only then.
    @Test func aTableKnowsWhichKindsItHolds() {
        let table = RegistrationTable()
        #expect(!table.hasMet(.token) && !table.hasMet(.fid))
        var text = Array("c1:APA91bHunvmxsRK5jPbx".utf8)
        _ = text.withUnsafeBytes { table.intern($0, .token) }
        #expect(table.hasMet(.token) && !table.hasMet(.fid))
        _ = text.withUnsafeBytes { table.existing($0, .fid) }
        #expect(!table.hasMet(.fid))
        text[0] = UInt8(ascii: "d")
        _ = text.withUnsafeBytes { table.intern($0, .fid) }
        #expect(table.hasMet(.token) && table.hasMet(.fid))
    }

    @Test func theTwinOfEachKindIsFound() {
        let token = Registration(value: "twin-kinds-APA91bHunvmxsRK5jPbx", kind: .token)
        #expect(token.asKind(.fid) == nil)
        let fid = Registration(value: "twin-kinds-APA91bHunvmxsRK5jPbx", kind: .fid)
        #expect(token.asKind(.fid) == fid)
        #expect(fid.asKind(.token) == token)
    }
}
