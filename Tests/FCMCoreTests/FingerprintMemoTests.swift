import Testing

@testable import FCMCore

@Suite struct FingerprintMemoTests {
    @Test func aKeyIsComputedOnceAndKeptPerOrdinal() {
        let memo = FingerprintMemo()
        var computed = 0
        for ordinal: UInt32 in [0, 1, 65_535, 65_536, 1 << 20] {
            for _ in 0..<3 {
                let key = memo.key(ordinal) {
                    computed += 1
                    return UInt64(ordinal) &* 31 &+ 7
                }
                #expect(key == UInt64(ordinal) &* 31 &+ 7)
            }
        }
        #expect(computed == 5)
        // 0 marks "not kept": a key of 0 is computed each time, and past the directory nothing is kept.
        var zeros = 0
        func counted(_ value: UInt64) -> UInt64 {
            zeros += 1
            return value
        }
        for _ in 0..<3 { #expect(memo.key(9) { counted(0) } == 0) }
        let far = UInt32(FingerprintMemo.chunkCount << FingerprintMemo.chunkShift)
        for _ in 0..<3 { #expect(memo.key(far) { counted(5) } == 5) }
        #expect(zeros == 6)
    }

    @Test func registrationsKeepTheirTextsFingerprint() {
        for value in ["c1:APA91bHunvmxsRK5jPbxG8nmtp8B3SKpVJmDZUYmL5Jr", "short", "fAbcdefghijklmnopqrstu"] {
            let registration = Registration(value: value, kind: .token)
            let direct = AppliedDeclarations.fnv(value)
            #expect(AppliedDeclarations.fnv(registration) == direct)
            #expect(AppliedDeclarations.fnv(registration) == direct)
        }
    }

    @Test func threadsAskingTogetherAllGetTheKey() async {
        let memo = FingerprintMemo()
        let ordinals = (0..<20_000).map { UInt32($0 * 7) }
        let wrong = await withTaskGroup(of: Int.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    ordinals.filter { ordinal in memo.key(ordinal) { UInt64(ordinal) | 1 << 40 } != UInt64(ordinal) | 1 << 40 }.count
                }
            }
            return await group.reduce(0, +)
        }
        #expect(wrong == 0)
    }
}
