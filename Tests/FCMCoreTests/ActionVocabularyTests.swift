import FCMCore
import Foundation
import Testing

/// The words plan files and JSON documents hold for actions and operations are the enums' raw values:
/// renaming a case must not change a file, and every word the golden outputs (made before the enums) hold
/// must read back as a case.
@Suite struct ActionVocabularyTests {
    static let golden = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("cli/golden/outputs")

    /// Every value under `key` anywhere in the golden JSON outputs.
    static func goldenValues(of key: String) throws -> Set<String> {
        var found = Set<String>()
        func walk(_ value: Any) {
            if let object = value as? [String: Any] {
                for (name, inner) in object {
                    if name == key, let text = inner as? String { found.insert(text) }
                    walk(inner)
                }
            } else if let array = value as? [Any] {
                array.forEach(walk)
            }
        }
        let files = try FileManager.default.contentsOfDirectory(atPath: golden.path).filter { $0.hasSuffix(".json") }
        #expect(!files.isEmpty)
        for file in files { walk(try JSONSerialization.jsonObject(with: Data(contentsOf: golden.appendingPathComponent(file)))) }
        return found
    }

    @Test func changeActionsAreTheWordsFilesHold() throws {
        // The order is the summary's order in every JSON document.
        #expect(ChangeAction.allCases.map(\.rawValue) == ["create", "update", "delete", "none"])
        let words = try Self.goldenValues(of: "action")
        #expect(words == ["create", "update", "delete", "none"])
        for word in words { #expect(ChangeAction(rawValue: word)?.description == word) }
    }

    @Test func operationKindsAreTheWordsFilesHold() throws {
        #expect(OperationKind.allCases.map(\.rawValue) == ["create", "add", "remove", "subscribe", "unsubscribe", "group steps"])
        let words = try Self.goldenValues(of: "operation")
        #expect(words.contains("subscribe") && words.contains("remove"))
        for word in words { #expect(OperationKind(rawValue: word)?.description == word) }
    }

    @Test func everyCaseRoundTripsThroughJSON() throws {
        for action in ChangeAction.allCases {
            let data = try JSONEncoder().encode([action])
            #expect(String(decoding: data, as: UTF8.self) == "[\"\(action.rawValue)\"]")
            #expect(try JSONDecoder().decode([ChangeAction].self, from: data) == [action])
        }
        for operation in OperationKind.allCases {
            let data = try JSONEncoder().encode([operation])
            #expect(try JSONDecoder().decode([OperationKind].self, from: data) == [operation])
        }
    }

    @Test func groupStepsAreNamedByTheirOperation() {
        let member = Registration(value: "t", kind: .token)
        for step in [GroupStep.create([member]), .add([member]), .remove([member])] {
            #expect(GroupStep(step.operation, [member]) == step)
        }
        for other in [OperationKind.subscribe, .unsubscribe, .groupSteps] { #expect(GroupStep(other, [member]) == nil) }
    }

    @Test func aSavedWordKeepsWhatTheFileSaidAndWritesItBare() throws {
        let known = try JSONDecoder().decode([SavedWord<OperationKind>].self, from: Data("[\"add\",\"nuke\"]".utf8))
        #expect(known.map(\.value) == [.add, nil])
        #expect(known.map(\.text) == ["add", "nuke"])
        #expect(String(decoding: try JSONEncoder().encode(known), as: UTF8.self) == "[\"add\",\"nuke\"]")
        #expect(SavedWord(ChangeAction.delete).text == "delete")
    }
}
