import FCMCore
import Foundation
import Testing

@testable import FCMState

/// The format version is never taken on its word (issue 32): a state that names an older version than its
/// content shows is refused, with the way out, and genuine older states are still read.
@Suite struct StateVersionTests {
    func refusal(_ text: String) -> String? {
        do {
            _ = try StateFileFormat.decode(Array(text.utf8), source: "dir/state.json")
            return nil
        } catch {
            return "\(error)"
        }
    }

    /// Every lowered version the file itself gives away is refused naming the file and `state push --force`;
    /// the rest look exactly like a version-2 state and are left to the serial record (StoreConformanceTests).
    @Test func aLoweredVersionIsRefusedUnlessNothingInTheFileShowsIt() {
        let mutants = DowngradeMutants.all()
        var refused = 0
        for mutant in mutants {
            if let message = refusal(mutant.text) {
                refused += 1
                #expect(!mutant.looksGenuine, "\(mutant) is indistinguishable from a version-2 state, yet: \(message)")
                #expect(message.hasPrefix("dir/state.json: ") && message.contains("`fcmctl state push --force FILE`"), "\(mutant): \(message)")
            } else {
                #expect(mutant.looksGenuine, "\(mutant) was read")
            }
        }
        #expect(mutants.count == 96)
        #expect(refused == 92)
    }

    /// The version edited in place, the checksum left as it was: the field that gives it away is named (the
    /// newest one), or, with no newer field left, the checksum, which covers the version line.
    @Test(arguments: [
        (2, false, "says format version 2, but its field 'project' is written only by version 4"),
        (2, true, "says format version 2, but its field 'checksum' is written only by version 3"),
        (1, true, "says format version 1, but its field 'checksum' is written only by version 3"),
        (3, false, "says format version 3, but its field 'project' is written only by version 4"),
        (3, true, "checksum does not match its content (its version included)"),
    ])
    func whatTheRefusalSays(version: Int, withoutVersion4Fields: Bool, expected: String) throws {
        var text = String(decoding: StateFileFormat.encode(DowngradeMutants.sample()), as: UTF8.self)
        text = text.replacingOccurrences(of: "\"version\": 4,", with: "\"version\": \(version),")
        if withoutVersion4Fields {
            text = DowngradeMutants.remove(field: "project", from: DowngradeMutants.remove(field: "device_names", from: text))
        }
        let message = try #require(refusal(text))
        #expect(message.contains(expected), "\(message)")
    }

    @Test func aRemovedVersionIsRefusedWithTheWayOut() throws {
        let text = String(decoding: StateFileFormat.encode(DowngradeMutants.sample()), as: UTF8.self)
        let message = try #require(refusal(text.replacingOccurrences(of: "\"version\": 4,\n", with: "")))
        #expect(message.contains("field 'version' is missing") && message.contains("`fcmctl state push --force FILE`"))
    }

    /// A file a person checked and pushes is read as the version its fields show, so a lowered version does
    /// not stand between them and the way out.
    @Test func aPushedFileIsReadAsTheVersionItsFieldsShow() throws {
        for mutant in DowngradeMutants.all() where mutant.version != nil && !mutant.topicDeleted && mutant.checksum != "removed" {
            let decoded = try StateFileFormat.decode(Array(mutant.text.utf8), source: "pushed.json", checkingChecksum: false)
            #expect(decoded.ledger.topics == DowngradeMutants.sample().topics, "\(mutant)")
            #expect(decoded.formatVersion >= 3, "\(mutant): carries a checksum, so it is read as version 3 or later")
        }
    }

    /// States older fcmctl versions wrote are read as before.
    @Test func genuineOlderStatesAreStillRead() throws {
        var unbound = DowngradeMutants.sample()
        unbound.project = ProjectBinding()
        unbound.deviceNames = [:]
        let v4 = String(decoding: StateFileFormat.encode(unbound), as: UTF8.self)
        let body = String(v4[..<v4.range(of: StateFileFormat.checksumField)!.lowerBound])
        let v3Body = body.replacingOccurrences(of: "\"version\": 4,", with: "\"version\": 3,")
        let v3 = v3Body + "\(StateFileFormat.checksumField)\(StateFileFormat.checksum(Array(v3Body.utf8)[...]))\"\n}\n"
        let v2 = body.replacingOccurrences(of: "\"version\": 4,", with: "\"version\": 2,") + "\n}\n"
        for (version, text) in [(3, v3), (2, v2)] {
            let decoded = try StateFileFormat.decode(Array(text.utf8), source: "s.json")
            #expect(decoded.formatVersion == version && decoded.ledger == unbound)
        }
    }

    @Test func theSerialRecordNamesTheFormatWritten() throws {
        let record = StateAssembly.serialRecord(Ledger(lineage: "L", serial: 7))
        #expect(StateAssembly.recordedSerial(record) == RecordedSerial(lineage: "L", serial: 7, format: StateFileFormat.currentVersion))
        // A record an older fcmctl wrote names no format, and is read as before.
        #expect(StateAssembly.recordedSerial(Array(#"{"lineage":"L","serial":7}"#.utf8)) == RecordedSerial(lineage: "L", serial: 7, format: nil))
    }
}
