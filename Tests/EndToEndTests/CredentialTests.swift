import FCMClient
import FCMViews
import Foundation
import Testing

/// Every credential source end to end: the built fcmctl, the emulator's token and metadata endpoints.
@Suite struct CredentialTests {
    static let quickstart = PlanApplyTests.quickstart

    /// An emulator that writes a service-account key trusted by it, and the environment fcmctl needs to
    /// reach it through FCM_ENDPOINT (authenticated) rather than FCM_EMULATOR_HOST (no auth). These tests are
    /// about signing in, not IAM: every principal may act on the quickstart's project (`--iam-default any-project`),
    /// though the key's account belongs to key-project.
    func setup(_ extra: [String] = []) async throws -> (InProcessEmulator, Workspace, String) {
        let workspace = try Workspace()
        let key = workspace.url.appendingPathComponent("sa.json").path
        let emulator = try await InProcessEmulator(
            arguments: ["--service-account-out", key, "--project-id", "key-project", "--iam-default", "any-project"] + extra)
        return (emulator, workspace, key)
    }

    func plan(_ emulator: any EmulatorHandle, _ workspace: Workspace, _ environment: [String: String], verbose: Bool = true) async throws -> CLIResult
    {
        try await CLI.runBinary(
            ["plan", "--detailed-exitcode", "-f", Self.quickstart, "--state", workspace.statePath] + (verbose ? ["--verbose"] : []),
            environment: ["FCM_ENDPOINT": emulator.baseURL, "HOME": workspace.url.path].merging(environment) { $1 })
    }

    func tokenGrants(_ emulator: any EmulatorHandle) async throws -> [Int] {
        try await emulator.requestLog().filter { $0["endpoint"] as? String == "oauth.token" }.compactMap { $0["status"] as? Int }
    }

    @Test func serviceAccountKeyFromGoogleApplicationCredentials() async throws {
        let (emulator, workspace, key) = try await setup()
        let result = try await plan(emulator, workspace, ["GOOGLE_APPLICATION_CREDENTIALS": key])
        #expect(result.code == 2, "\(result.stderr)")
        #expect(result.stderr.contains("Credentials: service-account key \(key)."))
        #expect(try await tokenGrants(emulator) == [200], "one token for the whole run")
        let keyText = try String(contentsOfFile: key, encoding: .utf8)
        let privateKeyLine = keyText.split(separator: "\n").first { $0.contains("MII") } ?? "MII"
        #expect(!(result.stdout + result.stderr).contains(privateKeyLine))
        #expect(!(result.stdout + result.stderr).contains("ya29."), "access tokens never printed, even with --verbose")
    }

    @Test func gcloudApplicationDefaultCredentialsFile() async throws {
        let (emulator, workspace, key) = try await setup()
        let config = workspace.url.appendingPathComponent("gcloud")
        try FileManager.default.createDirectory(at: config, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: key, toPath: config.appendingPathComponent("application_default_credentials.json").path)
        let result = try await plan(emulator, workspace, ["CLOUDSDK_CONFIG": config.path])
        #expect(result.code == 2, "\(result.stderr)")
        #expect(result.stderr.contains("application_default_credentials.json"))
    }

    @Test func authorizedUserRefreshToken() async throws {
        let (emulator, workspace, _) = try await setup(["--accept-refresh-token", "1//user-refresh"])
        let file = workspace.url.appendingPathComponent("user.json").path
        try
            #"{"type": "authorized_user", "client_id": "cid.apps.googleusercontent.com", "client_secret": "shh", "refresh_token": "1//user-refresh", "token_uri": "\#(emulator.baseURL)/token"}"#
            .write(toFile: file, atomically: true, encoding: .utf8)
        let result = try await plan(emulator, workspace, ["GOOGLE_APPLICATION_CREDENTIALS": file])
        #expect(result.code == 2, "\(result.stderr)")
        #expect(!(result.stdout + result.stderr).contains("1//user-refresh"))
        #expect(!(result.stdout + result.stderr).contains("shh"))
    }

    @Test func metadataServer() async throws {
        let (emulator, workspace, _) = try await setup()
        let result = try await plan(emulator, workspace, ["GCE_METADATA_HOST": emulator.host])
        #expect(result.code == 2, "\(result.stderr)")
        #expect(result.stderr.contains("Credentials: the metadata server at \(emulator.host)"))
    }

    @Test func accessTokenFromTheEnvironment() async throws {
        let (emulator, workspace, _) = try await setup(["--accept-token", "pipeline-minted"])
        await #expect(try plan(emulator, workspace, ["FCM_ACCESS_TOKEN": "pipeline-minted"]).code == 2)
        let refused = try await plan(emulator, workspace, ["FCM_ACCESS_TOKEN": "stale-token"])
        #expect(refused.code == 1)
        #expect(refused.stderr.contains("401 UNAUTHENTICATED"))
        #expect(!refused.stderr.contains("stale-token"))
    }

    @Test func wrongKeyIsAClearInvalidGrantNamingTheFile() async throws {
        let (emulator, workspace, _) = try await setup()
        // A key the emulator does not trust: written by another emulator, then pointed at this one.
        let otherKey = workspace.url.appendingPathComponent("other.json").path
        let other = try await InProcessEmulator(arguments: ["--service-account-out", otherKey])
        await other.stop()
        var text = try String(contentsOfFile: otherKey, encoding: .utf8)
        text = text.replacingOccurrences(of: other.baseURL, with: emulator.baseURL)
        try text.write(toFile: otherKey, atomically: true, encoding: .utf8)
        let result = try await plan(emulator, workspace, ["GOOGLE_APPLICATION_CREDENTIALS": otherKey], verbose: false)
        #expect(result.code == 1)
        #expect(result.stderr.contains("refused the service-account key \(otherKey): invalid_grant (Invalid JWT Signature.)"), "\(result.stderr)")
        #expect(!result.stderr.contains("PRIVATE KEY"))
        #expect(result.stderr.split(separator: "\n").count <= 3, "a sentence, not a stack of HTTP details")
    }

    @Test func projectIdComesFromTheKeyFileWhenTheManifestHasNone() async throws {
        let (emulator, workspace, key) = try await setup()
        try workspace.write("topics:\n  news: [\"a:APA91b\"]\n")
        let result = try await CLI.runBinary(
            ["apply", "--auto-approve", "-f", workspace.manifestPath, "--state", workspace.statePath],
            environment: ["FCM_ENDPOINT": emulator.baseURL, "GOOGLE_APPLICATION_CREDENTIALS": key, "HOME": workspace.url.path])
        #expect(result.code == 0, "\(result.stderr)")
        let paths = try await emulator.requestLog().compactMap { $0["path"] as? String }
        #expect(paths.contains { $0.hasPrefix("/v1/projects/key-project/registrations/") })
    }

    /// The JWT fcmctl signs, checked by a second implementation: Python's `cryptography`.
    @Test func jwtVerifiesWithAnIndependentImplementation() async throws {
        let (_, workspace, keyPath) = try await setup()
        let key = try ServiceAccountKey(path: keyPath)
        let jwt = try key.assertion(now: Date())
        let script = """
            import base64, json, sys, time
            from cryptography.hazmat.primitives import hashes, serialization
            from cryptography.hazmat.primitives.asymmetric import padding
            def b64(s): return base64.urlsafe_b64decode(s + "=" * (-len(s) % 4))
            info = json.load(open(sys.argv[1])); token = sys.argv[2]
            header, payload, signature = token.split(".")
            public = serialization.load_pem_private_key(info["private_key"].encode(), None).public_key()
            public.verify(b64(signature), f"{header}.{payload}".encode(), padding.PKCS1v15(), hashes.SHA256())
            h, c = json.loads(b64(header)), json.loads(b64(payload))
            assert h["alg"] == "RS256" and h["kid"] == info["private_key_id"], h
            assert c["iss"] == info["client_email"] and c["aud"] == info["token_uri"], c
            # FCM, and the bucket of the gcs state backend.
            assert c["scope"].split() == ["https://www.googleapis.com/auth/firebase.messaging", "https://www.googleapis.com/auth/devstorage.read_write"], c
            assert c["exp"] - c["iat"] == 3600 and abs(c["iat"] - time.time()) < 60, c
            print("verified")
            """
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", script, keyPath, jwt]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(text == "verified\n", "\(text)")
        _ = workspace
    }

    /// Injected 429s, 503s and dropped connections: apply still converges, and a second plan is clean.
    @Test func applyConvergesThroughInjectedFaults() async throws {
        let emulator = try await InProcessEmulator(arguments: [
            "--error-rate", "503=0.15,429=0.1", "--drop-rate", "0.05", "--seed", "11", "--retry-after", "0",
        ])
        let workspace = try Workspace()
        let common = ["-f", ManifestCommandTests.example("kiosk-fleet"), "--state", workspace.statePath]
        let apply = await CLI.run(["apply", "--auto-approve", "--verbose"] + common, emulator: emulator)
        #expect(apply.code == 0, "\(apply.stderr)")
        #expect(apply.stderr.contains("retries="), "faults were met and retried: \(apply.stderr)")
        _ = try await emulator.admin("PUT", "/emulator/v1/faults", json: "{}")
        #expect(await CLI.run(["plan", "--detailed-exitcode"] + common, emulator: emulator).code == 0)
        #expect(try await emulator.topics(of: "dWq3Er5Ty7Ui9Op1As3Df5") == ["firmware-tab-a8", "weather"])
    }
}
