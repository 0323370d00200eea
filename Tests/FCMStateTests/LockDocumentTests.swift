import FCMCore
import Foundation
import Testing

@testable import FCMState

/// The lock is written by hand; JSONEncoder with the options it used to be written with is the reference.
@Suite struct LockDocumentTests {
    static let locks: [LockInfo] = [
        LockInfo(
            id: "3f2a", who: "ci@runner-1", host: "runner-1", pid: 4242, processStart: 987_654_321, operation: "apply",
            created: Date(timeIntervalSince1970: 1_796_000_000), expires: Date(timeIntervalSince1970: 1_796_000_090.75),
            version: "fcmctl 0.9.0 (abc123)"),
        LockInfo(
            id: "", who: "we\"ird\\user\u{1}é/x", host: "h\tost", pid: Int32.max, processStart: nil, operation: "state rm",
            created: Date(timeIntervalSince1970: 0), expires: Date(timeIntervalSince1970: 4_102_444_800), version: "dev/local"),
        LockInfo(
            id: "x", who: "a@b", host: "b", pid: 1, processStart: UInt64(Int64.max), operation: "state push",
            created: Date(timeIntervalSince1970: 1_796_000_000.999), expires: Date(timeIntervalSince1970: 1_796_000_001), version: ""),
    ]

    @Test(arguments: locks)
    func theHandWrittenLockIsWhatJSONEncoderWrote(lock: LockInfo) throws {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
        let reference = String(decoding: try encoder.encode(lock), as: UTF8.self) + "\n"
        let written = String(decoding: LockDocument.encode(lock), as: UTF8.self)
        // JSON allows either spelling of a control character's escape; compare the parsed documents for those.
        if lock.who.unicodeScalars.allSatisfy({ $0.value >= 0x20 }) && lock.host.unicodeScalars.allSatisfy({ $0.value >= 0x20 }) {
            #expect(written == reference)
        } else {
            let decoder = JSONDecoder()
            decoder.dateDecodingStrategy = .iso8601
            #expect(try decoder.decode(LockInfo.self, from: Data(written.utf8)) == decoder.decode(LockInfo.self, from: Data(reference.utf8)))
        }
        let read = try LockDocument.decode(LockDocument.encode(lock), source: "lock", remedy: "")
        #expect(read.id == lock.id && read.who == lock.who && read.host == lock.host && read.pid == lock.pid)
        #expect(read.processStart == lock.processStart && read.operation == lock.operation && read.version == lock.version)
        #expect(Int(read.created.timeIntervalSince1970) == Int(lock.created.timeIntervalSince1970))
        #expect(Int(read.expires.timeIntervalSince1970) == Int(lock.expires.timeIntervalSince1970))
    }
}
