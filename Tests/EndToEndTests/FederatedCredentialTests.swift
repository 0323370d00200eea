import FCMViews
import Foundation
import Testing

/// The credentials CI and people actually sign in with, end to end: the built fcmctl against the emulator's
/// security token service, IAM Credentials and identity-token stand-in, reached through FCM_ENDPOINT (never
/// FCM_EMULATOR_HOST, which skips credentials).
@Suite struct FederatedCredentialTests {
    static let subject = "eyJhbGciOiJSUzI1NiJ9.github-oidc-subject.sig"
    static let audience = "//iam.googleapis.com/projects/123456/locations/global/workloadIdentityPools/ci/providers/github"
    static let account = "fcm-deployer@acme-prod.iam.gserviceaccount.com"
    static let fcmScopes = "https://www.googleapis.com/auth/firebase.messaging https://www.googleapis.com/auth/devstorage.read_write"

    func emulator(_ extra: [String] = []) async throws -> InProcessEmulator {
        // These tests are about signing in, not IAM: the pool's identities and the impersonated account may act on
        // the quickstart's project, as before the emulator modelled IAM.
        try await InProcessEmulator(arguments: ["--accept-subject-token", Self.subject, "--iam-default", "any-project"] + extra)
    }

    func write(_ object: [String: Any], _ name: String, in workspace: Workspace) throws -> String {
        let path = workspace.url.appendingPathComponent(name).path
        let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
        try data.write(to: URL(fileURLWithPath: path))
        return path
    }

    /// What google-github-actions/auth writes for workload identity federation, with the emulator's URLs.
    func externalAccount(
        _ emulator: any EmulatorHandle, source: [String: Any], impersonate: Bool, extra: [String: Any] = [:]
    ) -> [String: Any] {
        var object: [String: Any] = [
            "type": "external_account", "audience": Self.audience, "subject_token_type": "urn:ietf:params:oauth:token-type:jwt",
            "token_url": "\(emulator.baseURL)/v1/token", "credential_source": source,
        ]
        if impersonate {
            object["service_account_impersonation_url"] =
                "\(emulator.baseURL)/v1/projects/-/serviceAccounts/\(Self.account):generateAccessToken"
        }
        return object.merging(extra) { $1 }
    }

    func plan(_ emulator: any EmulatorHandle, _ workspace: Workspace, credentials: String, _ extra: [String: String] = [:]) async throws
        -> CLIResult
    {
        try await CLI.runBinary(
            ["plan", "--detailed-exitcode", "-f", CredentialTests.quickstart, "--state", workspace.statePath, "--verbose"],
            environment: ["FCM_ENDPOINT": emulator.baseURL, "GOOGLE_APPLICATION_CREDENTIALS": credentials, "HOME": workspace.url.path]
                .merging(extra) { $1 })
    }

    func entries(_ emulator: any EmulatorHandle, _ endpoint: String) async throws -> [[String: Any]] {
        try await emulator.requestLog().filter { $0["endpoint"] as? String == endpoint }
    }

    func fields(_ entry: [String: Any]?) -> [String: String] { entry?["fields"] as? [String: String] ?? [:] }

    func expectNoSecrets(_ result: CLIResult) {
        let output = result.stdout + result.stderr
        #expect(!output.contains(Self.subject), "the subject token is never printed")
        #expect(!output.contains("ya29."), "access tokens are never printed")
    }

    @Test func fileSourceWithJSONFormatDirect() async throws {
        let emulator = try await emulator()
        let workspace = try Workspace()
        let tokenFile = try write(["value": Self.subject], "oidc.json", in: workspace)
        let source: [String: Any] = ["file": tokenFile, "format": ["type": "json", "subject_token_field_name": "value"]]
        let credentials = try write(externalAccount(emulator, source: source, impersonate: false), "wif.json", in: workspace)
        let result = try await plan(emulator, workspace, credentials: credentials)
        #expect(result.code == 2, "\(result.stderr)")
        #expect(result.stderr.contains("Credentials: external-account credentials \(credentials)"))
        let exchanges = try await entries(emulator, "sts.token")
        #expect(exchanges.map { $0["status"] as? Int } == [200], "one exchange for the whole run")
        let sent = fields(exchanges.first)
        #expect(sent["grant_type"] == "urn:ietf:params:oauth:grant-type:token-exchange")
        #expect(sent["requested_token_type"] == "urn:ietf:params:oauth:token-type:access_token")
        #expect(sent["audience"] == Self.audience)
        #expect(sent["subject_token_type"] == "urn:ietf:params:oauth:token-type:jwt")
        #expect(sent["scope"] == Self.fcmScopes, "without impersonation the federated token is used for FCM itself")
        #expect(sent["subject_token"]?.hasPrefix("sha256:") == true, "the log keeps a digest, never the token")
        #expect(try await entries(emulator, "iam.generateAccessToken").isEmpty)
        expectNoSecrets(result)
    }

    @Test func fileSourceWithImpersonationAndLifetime() async throws {
        let emulator = try await emulator()
        let workspace = try Workspace()
        let tokenFile = workspace.url.appendingPathComponent("oidc.txt").path
        try "\(Self.subject)\n".write(toFile: tokenFile, atomically: true, encoding: .utf8)
        let credentials = try write(
            externalAccount(
                emulator, source: ["file": tokenFile], impersonate: true,
                extra: ["service_account_impersonation": ["token_lifetime_seconds": 600]]), "wif.json", in: workspace)
        let result = try await plan(emulator, workspace, credentials: credentials)
        #expect(result.code == 2, "\(result.stderr)")
        let exchange = fields(try await entries(emulator, "sts.token").first)
        #expect(exchange["scope"] == "https://www.googleapis.com/auth/iam", "the federated token only calls IAM")
        let impersonations = try await entries(emulator, "iam.generateAccessToken")
        #expect(impersonations.map { $0["status"] as? Int } == [200])
        #expect(fields(impersonations.first)["scope"] == Self.fcmScopes)
        #expect(fields(impersonations.first)["lifetime"] == "600s")
        expectNoSecrets(result)
    }

    /// Exactly the shape google-github-actions/auth writes: GitHub's identity-token URL with its request
    /// token as a bearer header, a JSON answer whose `value` is the subject token, and impersonation.
    @Test func urlSourceWithHeadersAsGitHubActionsWritesIt() async throws {
        let emulator = try await emulator(["--oidc-request-token", "runner-request-token"])
        let workspace = try Workspace()
        let source: [String: Any] = [
            "url": "\(emulator.baseURL)/emulator/v1/oidc-token?audience=fcmctl", "headers": ["Authorization": "Bearer runner-request-token"],
            "format": ["type": "json", "subject_token_field_name": "value"],
        ]
        for impersonate in [false, true] {
            let credentials = try write(
                externalAccount(emulator, source: source, impersonate: impersonate), "gha-creds-\(impersonate).json", in: workspace)
            let result = try await plan(emulator, workspace, credentials: credentials)
            #expect(result.code == 2, "impersonate \(impersonate): \(result.stderr)")
            #expect(!(result.stdout + result.stderr).contains("runner-request-token"))
            expectNoSecrets(result)
        }
        #expect(try await entries(emulator, "sts.token").count == 2)
        #expect(try await entries(emulator, "iam.generateAccessToken").count == 1)

        let wrongHeader = try write(
            externalAccount(emulator, source: source.merging(["headers": ["Authorization": "Bearer expired"]]) { $1 }, impersonate: false),
            "gha-stale.json", in: workspace)
        let refused = try await plan(emulator, workspace, credentials: wrongHeader)
        #expect(refused.code == 1)
        #expect(refused.stderr.contains("\(wrongHeader): the subject token URL \(emulator.baseURL)/emulator/v1/oidc-token?… answered HTTP 401"))
    }

    @Test func impersonatedServiceAccountFromUserCredentialsWithQuotaProject() async throws {
        let emulator = try await emulator(["--accept-refresh-token", "1//gcloud-user"])
        let workspace = try Workspace()
        let file: [String: Any] = [
            "type": "impersonated_service_account", "delegates": [String](),
            "service_account_impersonation_url": "\(emulator.baseURL)/v1/projects/-/serviceAccounts/\(Self.account):generateAccessToken",
            "source_credentials": [
                "type": "authorized_user", "client_id": "764086051850.apps.googleusercontent.com", "client_secret": "d-FL95Q19q7MQmFpd7hHD0Ty",
                "refresh_token": "1//gcloud-user", "token_uri": "\(emulator.baseURL)/token",
            ],
            "quota_project_id": "acme-billing",
        ]
        let credentials = try write(file, "impersonated.json", in: workspace)
        let result = try await plan(emulator, workspace, credentials: credentials)
        #expect(result.code == 2, "\(result.stderr)")
        #expect(result.stderr.contains("Credentials: impersonated service-account credentials \(credentials)"))
        #expect(try await entries(emulator, "oauth.token").map { $0["status"] as? Int } == [200])
        #expect(try await entries(emulator, "iam.generateAccessToken").map { $0["status"] as? Int } == [200])
        let fcmRequests = try await emulator.requestLog().filter { ($0["endpoint"] as? String)?.hasPrefix("topics.") == true }
        #expect(!fcmRequests.isEmpty)
        #expect(fcmRequests.allSatisfy { $0["user_project"] as? String == "acme-billing" }, "quota_project_id → x-goog-user-project")
        #expect(!(result.stdout + result.stderr).contains("1//gcloud-user"))
        #expect(!(result.stdout + result.stderr).contains("d-FL95Q19q7MQmFpd7hHD0Ty"))
    }

    @Test func impersonatedServiceAccountFromAKey() async throws {
        let workspace = try Workspace()
        let key = workspace.url.appendingPathComponent("source-key.json").path
        let emulator = try await emulator(["--service-account-out", key])
        var source = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: key))) as! [String: Any]
        source["type"] = "service_account"
        let credentials = try write(
            [
                "type": "impersonated_service_account", "source_credentials": source,
                "service_account_impersonation_url": "\(emulator.baseURL)/v1/projects/-/serviceAccounts/\(Self.account):generateAccessToken",
            ], "impersonated.json", in: workspace)
        let result = try await plan(emulator, workspace, credentials: credentials, ["GOOGLE_CLOUD_QUOTA_PROJECT": "from-env"])
        #expect(result.code == 2, "\(result.stderr)")
        #expect(try await entries(emulator, "iam.generateAccessToken").map { $0["status"] as? Int } == [200])
        let fcmRequests = try await emulator.requestLog().filter { ($0["endpoint"] as? String)?.hasPrefix("topics.") == true }
        #expect(fcmRequests.allSatisfy { $0["user_project"] as? String == "from-env" }, "GOOGLE_CLOUD_QUOTA_PROJECT wins")
    }

    @Test func workforceUserRefreshesAtSTSWithBasicAuthentication() async throws {
        let emulator = try await emulator(["--accept-refresh-token", "workforce-refresh"])
        let workspace = try Workspace()
        let credentials = try write(
            [
                "type": "external_account_authorized_user", "audience": "//iam.googleapis.com/locations/global/workforcePools/acme/providers/okta",
                "refresh_token": "workforce-refresh", "token_url": "\(emulator.baseURL)/v1/oauthtoken", "client_id": "workforce-client",
                "client_secret": "workforce-secret", "quota_project_id": "acme-billing",
            ], "workforce.json", in: workspace)
        let result = try await plan(emulator, workspace, credentials: credentials)
        #expect(result.code == 2, "\(result.stderr)")
        let refreshes = try await entries(emulator, "sts.token")
        #expect(refreshes.map { $0["status"] as? Int } == [200])
        #expect(fields(refreshes.first)["grant_type"] == "refresh_token")
        #expect(fields(refreshes.first)["refresh_token"]?.hasPrefix("sha256:") == true)
        #expect(fields(refreshes.first)["client_secret"] == nil, "the client authenticates in the header, not the form")
        #expect(!(result.stdout + result.stderr).contains("workforce-secret"))
    }

    @Test func aSubjectTokenThePoolDoesNotTrustIsAClearError() async throws {
        let emulator = try await emulator()
        let workspace = try Workspace()
        let tokenFile = workspace.url.appendingPathComponent("oidc.txt").path
        try "someone-elses-token".write(toFile: tokenFile, atomically: true, encoding: .utf8)
        let credentials = try write(externalAccount(emulator, source: ["file": tokenFile], impersonate: true), "wif.json", in: workspace)
        let result = try await plan(emulator, workspace, credentials: credentials)
        #expect(result.code == 1)
        #expect(
            result.stderr.contains("refused the external_account credentials \(credentials) (security token exchange): invalid_grant"),
            "\(result.stderr)")
        #expect(!result.stderr.contains("someone-elses-token"))
    }

    @Test func unsupportedAndMalformedFilesNameTheFileAndWhatIsSupported() async throws {
        let emulator = try await emulator()
        let workspace = try Workspace()
        let gdch = try write(["type": "gdch_service_account", "format_version": "1"], "gdch.json", in: workspace)
        let unsupported = try await plan(emulator, workspace, credentials: gdch)
        #expect(unsupported.code == 1)
        #expect(unsupported.stderr.contains("\(gdch): credentials of type 'gdch_service_account' are not supported"))
        #expect(unsupported.stderr.contains("external_account, external_account_authorized_user, impersonated_service_account"))

        let broken = workspace.url.appendingPathComponent("broken.json").path
        try "{\"type\": \"external_account\",".write(toFile: broken, atomically: true, encoding: .utf8)
        let malformed = try await plan(emulator, workspace, credentials: broken)
        #expect(malformed.code == 1)
        #expect(malformed.stderr.contains("\(broken): not a JSON credentials file"))

        let executable = try write(
            externalAccount(emulator, source: ["executable": ["command": "/bin/true"]], impersonate: false), "exec.json", in: workspace)
        let noExecutables = try await plan(emulator, workspace, credentials: executable)
        #expect(noExecutables.code == 1)
        #expect(noExecutables.stderr.contains("\(executable): this external_account takes its subject token from an executable"))

        let incomplete = try write(["type": "external_account", "audience": Self.audience], "incomplete.json", in: workspace)
        let missing = try await plan(emulator, workspace, credentials: incomplete)
        #expect(missing.code == 1)
        #expect(missing.stderr.contains("\(incomplete): external_account credentials need the field subject_token_type"))
    }

    /// The run that once aborted in about half of its tries ("Attempted to read an unowned reference"): no
    /// credentials at all, with a gs:// state. The metadata ping goes to a closed loopback port.
    @Test func noCredentialsIsExitOneEveryTime() async throws {
        let workspace = try Workspace()
        let environment = [
            "HOME": workspace.url.path, "GCE_METADATA_IP": "127.0.0.1:1", "GOOGLE_APPLICATION_CREDENTIALS": "",
            "STORAGE_EMULATOR_HOST": "", "FCM_ACCESS_TOKEN": "",
        ]
        var codes: [Int32: Int] = [:]
        func count(_ result: CLIResult) {
            codes[result.code, default: 0] += 1
            if result.code != 1 { Issue.record("exit \(result.code): \(result.stderr)") }
        }
        // Four processes at a time: the exit status must not depend on what else the machine is doing either.
        try await withThrowingTaskGroup(of: CLIResult.self) { group in
            for index in 0..<200 {
                if index >= 4, let result = try await group.next() { count(result) }
                group.addTask { try await CLI.runBinary(["state", "list", "--state", "gs://acme-fcm-state/prod"], environment: environment) }
            }
            for try await result in group { count(result) }
        }
        #expect(codes == [1: 200])
        let plan = try await CLI.runBinary(["plan", "-f", CredentialTests.quickstart, "--state", workspace.statePath], environment: environment)
        #expect(plan.code == 1)
        #expect(plan.stderr.contains("no credentials found"), "\(plan.stderr)")
        #expect(plan.stderr.contains("Set GOOGLE_APPLICATION_CREDENTIALS"))
    }

    @Test func metadataServerFoundByItsPing() async throws {
        // The ping waits a short real time for its answer: an emulator process answers whatever else this test
        // process runs.
        let emulator = try EmulatorProcess(arguments: ["--accept-subject-token", Self.subject, "--iam-default", "any-project"])
        let workspace = try Workspace()
        let result = try await CLI.runBinary(
            ["plan", "--detailed-exitcode", "-f", CredentialTests.quickstart, "--state", workspace.statePath, "--verbose"],
            environment: ["FCM_ENDPOINT": emulator.baseURL, "HOME": workspace.url.path, "GCE_METADATA_IP": emulator.host])
        #expect(result.code == 2, "\(result.stderr)")
        #expect(result.stderr.contains("Credentials: the metadata server at \(emulator.host)"))
        let pings = try await emulator.requestLog().filter { $0["endpoint"] as? String == "metadata" && $0["path"] as? String == "/" }
        #expect(pings.count == 1)
    }

    /// Tokens that live two seconds, an apply paced to take about four: every request still carries a live token.
    @Test func anApplyOutlivesItsTokens() async throws {
        // Token lifetimes are real time: an emulator process keeps it whatever else this test process runs.
        let emulator = try EmulatorProcess(arguments: [
            "--accept-subject-token", Self.subject, "--token-lifetime", "2s", "--iam-default", "any-project",
        ])
        let workspace = try Workspace()
        try workspace.write(fleetManifest(registrations: 40, topics: 4))
        let tokenFile = try write(["value": Self.subject], "oidc.json", in: workspace)
        let source: [String: Any] = ["file": tokenFile, "format": ["type": "json", "subject_token_field_name": "value"]]
        let credentials = try write(externalAccount(emulator, source: source, impersonate: true), "wif.json", in: workspace)
        let result = try await CLI.runBinary(
            ["apply", "--auto-approve", "-f", workspace.manifestPath, "--state", workspace.statePath, "--qps", "40", "--parallelism", "4"],
            environment: ["FCM_ENDPOINT": emulator.baseURL, "GOOGLE_APPLICATION_CREDENTIALS": credentials, "HOME": workspace.url.path])
        #expect(result.code == 0, "\(result.stderr)")
        #expect(result.stdout.contains("0 failed"), "\(result.stdout)")
        let log = try await emulator.requestLog()
        let grants = log.filter { $0["endpoint"] as? String == "iam.generateAccessToken" }.count
        // At 40 changes a second 160 changes take 4 s: at least two refreshes of a 2 s token.
        #expect(grants >= 3, "\(grants) tokens")
        #expect(log.filter { $0["status"] as? Int == 401 }.isEmpty, "no request went out with an expired token")
        let again = try await CLI.runBinary(
            ["plan", "--detailed-exitcode", "-f", workspace.manifestPath, "--state", workspace.statePath],
            environment: ["FCM_ENDPOINT": emulator.baseURL, "GOOGLE_APPLICATION_CREDENTIALS": credentials, "HOME": workspace.url.path])
        #expect(again.code == 0, "converged: \(again.stdout)\(again.stderr)")
    }
}
