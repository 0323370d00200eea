import FCMClient
import Foundation
import Testing

@Suite struct CredentialFileTests {
    func resolve(_ environment: [String: String], files: [String: String] = [:], metadata: @escaping (String) -> Bool = { _ in false }) throws
        -> CredentialSource
    {
        try CredentialResolver.resolve(
            environment: environment, fileExists: { files[$0] != nil }, readFile: { files[$0] }, metadataAnswers: metadata)
    }

    @Test(arguments: [
        ("external_account", CredentialSource.externalAccount(path: "/c.json")),
        ("external_account_authorized_user", .externalAccountAuthorizedUser(path: "/c.json")),
        ("impersonated_service_account", .impersonatedServiceAccount(path: "/c.json")),
        ("authorized_user", .authorizedUser(path: "/c.json")),
        ("service_account", .serviceAccount(path: "/c.json")),
    ])
    func everyTypeGoogleToolsWriteIsRecognised(type: String, source: CredentialSource) throws {
        #expect(try resolve(["GOOGLE_APPLICATION_CREDENTIALS": "/c.json"], files: ["/c.json": #"{"type": "\#(type)"}"#]) == source)
    }

    @Test func theMetadataServerIsPingedOnlyWhenNothingElseApplies() throws {
        var asked: [String] = []
        let source = try resolve(["HOME": "/nowhere"]) { host in
            asked.append(host)
            return true
        }
        #expect(source == .metadataServer(host: "metadata.google.internal"), "by name: off Google Cloud the lookup fails")
        #expect(asked == ["metadata.google.internal"])
        #expect(try resolve(["HOME": "/nowhere", "GCE_METADATA_IP": "127.0.0.1:9"]) { $0 == "127.0.0.1:9" } == .metadataServer(host: "127.0.0.1:9"))
        #expect(throws: CredentialError.self) { try resolve(["HOME": "/nowhere", "NO_GCE_CHECK": "True"]) { _ in true } }
        asked = []
        _ = try resolve(["FCM_ACCESS_TOKEN": "t"]) { host in
            asked.append(host)
            return true
        }
        #expect(asked.isEmpty, "no ping when a source was found")
    }

    @Test func noSourceSaysWhatToSet() {
        do {
            _ = try resolve(["HOME": "/nowhere"])
            Issue.record("expected an error")
        } catch {
            #expect("\(error)".contains("no credentials found"))
            #expect("\(error)".contains("Set GOOGLE_APPLICATION_CREDENTIALS"))
        }
    }

    @Test func malformedFilesNameTheFileNotTheirContent() {
        do {
            _ = try resolve(["GOOGLE_APPLICATION_CREDENTIALS": "/c.json"], files: ["/c.json": "{\"private_key\": \"MIIsecret"])
            Issue.record("expected an error")
        } catch {
            #expect("\(error)".contains("/c.json: not a JSON credentials file"))
            #expect(!"\(error)".contains("MIIsecret"))
        }
    }
}
