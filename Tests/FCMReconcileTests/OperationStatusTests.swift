import FCMCore
import FCMReconcile
import Foundation
import Testing

/// Apply's JSON document and progress events name how operations ended by `OperationStatus`'s raw values:
/// the words the golden apply documents (made before the enum) hold.
@Suite struct OperationStatusTests {
    @Test func statusWordsAreTheDocumentedOnes() {
        #expect(OperationStatus.allCases.map(\.rawValue) == ["done", "gone", "already_subscribed", "failed", "not_attempted"])
        for status in OperationStatus.allCases { #expect(OperationStatus(rawValue: status.rawValue) == status) }
    }

    @Test func everyOutcomeHasTheStatusOfItsKind() {
        let statuses: [(OperationOutcome.Status, OperationStatus)] = [
            (.gone(reason: "UNREGISTERED"), .gone), (.failed(code: "INTERNAL", message: "x", retryable: true), .failed),
            (.notAttempted(reason: "stopped"), .notAttempted), (.alreadySubscribed, .alreadySubscribed),
        ]
        for (status, kind) in statuses { #expect(status.kind == kind) }
    }

    @Test func goldenApplyDocumentsHoldOnlyTheseWords() throws {
        let golden = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("cli/golden/outputs")
        var words = Set<String>()
        for file in try FileManager.default.contentsOfDirectory(atPath: golden.path) where file.hasSuffix("-apply.json") {
            let top = try JSONSerialization.jsonObject(with: Data(contentsOf: golden.appendingPathComponent(file))) as? [String: Any]
            let document = top?["document"] as? [String: Any] ?? [:]
            for key in ["completed", "outcomes"] {
                for entry in document[key] as? [[String: Any]] ?? [] { words.insert(entry["status"] as? String ?? "<none>") }
            }
        }
        #expect(words.contains("done") && words.contains("failed"))
        for word in words { #expect(OperationStatus(rawValue: word) != nil, "\(word)") }
    }
}
