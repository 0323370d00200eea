import FCMCore
import Foundation

@testable import FCMState

/// A current state with every field a newer version brought, and the ways a person or a tool could lower its
/// version: the version line set to 1, 2 or 3 or removed; its checksum kept, removed, or recomputed over the
/// edit; its project and its device names (version 4's fields) kept or removed; and, as in the report that
/// found the hole, a topic's records deleted or not.
enum DowngradeMutants {
    static let a = Registration(value: "a:APA91bAAAAAAAAAAAAAAAAAAAAAA", kind: .token)
    static let b = Registration(value: "b:APA91bBBBBBBBBBBBBBBBBBBBBBB", kind: .token)
    static let f = Registration(value: "cR1rjyj4_KcAPA91bGusQ2", kind: .fid)

    static func sample(lineage: String = "0123abcd0123abcd0123abcd0123abcd", serial: Int = 41) -> Ledger {
        var ledger = Ledger(lineage: lineage, serial: serial)
        ledger.recordSubscription(a, topic: "news")
        ledger.recordSubscription(f, topic: "news")
        ledger.recordSubscription(b, topic: "sports")
        ledger.recordGroup("family", members: [a, b])
        ledger.deviceNames[a] = "kiosk-1"
        ledger.project = ProjectBinding(id: "acme-prod", senderId: "222222222222")
        return ledger
    }

    struct Mutant: CustomStringConvertible {
        var version: Int?
        var checksum: String
        var project: Bool
        var deviceNames: Bool
        var topicDeleted: Bool
        var text: String

        var description: String {
            "version \(version.map(String.init) ?? "removed"), checksum \(checksum), project \(project ? "kept" : "removed"), "
                + "device_names \(deviceNames ? "kept" : "removed")\(topicDeleted ? ", topic sports deleted" : "")"
        }

        /// Nothing in the file itself tells it from a state a version-2 or version-3 fcmctl wrote (one edited
        /// with care, its checksum recomputed): only the store's serial record can, as it names the format of
        /// the last state the store wrote.
        var looksGenuine: Bool {
            !project && !deviceNames && (version == 2 && checksum == "removed" || version == 3 && checksum == "recomputed")
        }
    }

    static func all(of ledger: Ledger = sample()) -> [Mutant] {
        let text = String(decoding: StateFileFormat.encode(ledger), as: UTF8.self)
        var mutants: [Mutant] = []
        for version in [3, 2, 1, nil] as [Int?] {
            for checksum in ["kept", "removed", "recomputed"] {
                for project in [true, false] {
                    for deviceNames in [true, false] {
                        for topicDeleted in [false, true] {
                            var body = String(text[..<text.range(of: StateFileFormat.checksumField)!.lowerBound])
                            let head = "{\n\"version\": \(StateFileFormat.currentVersion),\n"
                            body = body.replacingOccurrences(of: head, with: version.map { "{\n\"version\": \($0),\n" } ?? "{\n")
                            if !project { body = remove(field: "project", from: body) }
                            if !deviceNames { body = remove(field: "device_names", from: body) }
                            if topicDeleted { body = body.replacingOccurrences(of: ",\n  \"sports\": [1]", with: "") }
                            let digest: String? =
                                switch checksum {
                                case "kept": String(text[text.range(of: StateFileFormat.checksumField)!.upperBound...].prefix(64))
                                case "recomputed": StateFileFormat.checksum(Array(body.utf8)[...])
                                default: nil
                                }
                            let whole = body + (digest.map { "\(StateFileFormat.checksumField)\($0)\"\n}\n" } ?? "\n}\n")
                            mutants.append(
                                Mutant(
                                    version: version, checksum: checksum, project: project, deviceNames: deviceNames, topicDeleted: topicDeleted,
                                    text: whole))
                        }
                    }
                }
            }
        }
        return mutants
    }

    /// Removes `,\n"field": …` as the encoder lays it out: up to the next top-level field, which starts its
    /// own line after a comma, or to the end of the text.
    static func remove(field: String, from text: String) -> String {
        guard let start = text.range(of: ",\n\"\(field)\": ") else { return text }
        let end = text.range(of: ",\n\"", range: start.upperBound..<text.endIndex)?.lowerBound ?? text.endIndex
        return String(text[..<start.lowerBound]) + String(text[end...])
    }
}
