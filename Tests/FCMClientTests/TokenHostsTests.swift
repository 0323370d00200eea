import FCMClient
import Testing

/// token_url and service_account_impersonation_url receive a subject token and a federated token: only
/// Google's hosts for the service (google-auth 2.15's patterns, and regional endpoints), loopback, or a host
/// FCMCTL_ALLOW_TOKEN_HOSTS names may.
@Suite struct TokenHostsTests {
    func refusal(_ url: String, _ service: TokenHosts.Service, environment: [String: String] = [:]) -> String? {
        do {
            try TokenHosts(environment: environment).check(url, field: "token_url", service: service, in: "/creds.json")
            return nil
        } catch {
            return "\(error)"
        }
    }

    @Test(arguments: [
        "https://sts.googleapis.com/v1/token", "https://STS.GoogleAPIs.com/v1/token", "https://us-east-1.sts.googleapis.com/v1/token",
        "https://sts.us-east-1.googleapis.com/v1/token", "https://us-east-1-sts.googleapis.com/v1/token",
        "https://sts-xyz.p.googleapis.com/v1/token", "https://sts-xyz.p.mtls.googleapis.com/v1/token", "https://sts.mtls.googleapis.com/v1/token",
        "https://sts.us-central1.rep.googleapis.com/v1/token", "https://sts.googleapis.com:443/v1/token?x=1",
    ])
    func googlesSecurityTokenServiceHostsPass(url: String) {
        #expect(refusal(url, .securityTokenService) == nil)
    }

    @Test(arguments: [
        "https://iamcredentials.googleapis.com/v1/projects/-/serviceAccounts/a@b.iam.gserviceaccount.com:generateAccessToken",
        "https://us-east-1.iamcredentials.googleapis.com/v1/x", "https://iamcredentials.mtls.googleapis.com/v1/x",
        "https://us-east-1-iamcredentials.googleapis.com/v1/x", "https://iamcredentials-xyz.p.googleapis.com/v1/x",
        "https://iamcredentials.europe-west1.rep.googleapis.com/v1/x",
    ])
    func googlesIAMCredentialsHostsPass(url: String) {
        #expect(refusal(url, .iamCredentials) == nil)
    }

    /// A key's or an authorized_user's token_uri: Google's OAuth 2.0 endpoint, the older accounts.google.com, or loopback.
    @Test func oauthTokenEndpointsPassAndOthersDoNot() {
        #expect(refusal("https://oauth2.googleapis.com/token", .oauth2) == nil)
        #expect(refusal("https://accounts.google.com/o/oauth2/token", .oauth2) == nil)
        #expect(refusal("http://127.0.0.1:9595/token", .oauth2) == nil)
        #expect(refusal("https://oauth2.googleapis.com.example.com/token", .oauth2)?.contains("Google's OAuth 2.0 token endpoint") == true)
        #expect(refusal("http://oauth2.googleapis.com/token", .oauth2)?.contains("not HTTPS") == true)
        #expect(refusal("https://sts.googleapis.com/v1/token", .oauth2) != nil)
    }

    /// google-auth's own invalid cases (tests/test_external_account.py, 2.15), and parser tricks: the host is
    /// the one curl would connect to.
    @Test(arguments: [
        "https://sts.googleapis.com.evil.com/v1/token", "https://evil.com/sts.googleapis.com", "https://evil.com#@sts.googleapis.com/",
        "https://sts.googleapis.com@evil.com/v1/token", "https://iamcredentials.googleapis.com/v1/token", "https://sts.pgoogleapis.com",
        "https://p.googleapis.com", "https://xyz-sts.p.googleapis.com", "https://sts-xyz.123.p.googleapis.com",
        "https://sts-xyz.p1.googleapis.com", "https://sts-xyz.p.foo.com", "https://-sts.googleapis.com", "https://a.b.sts.googleapis.com",
        "https://sts..googleapis.com", "https://sts.googleapis.com./v1/token", "https://10.0.0.1/v1/token",
    ])
    func otherHostsAreRefusedByName(url: String) throws {
        let message = try #require(refusal(url, .securityTokenService))
        #expect(message.hasPrefix("/creds.json: token_url names the host "), "\(message)")
        #expect(message.contains("Nothing was sent"))
        #expect(message.contains("FCMCTL_ALLOW_TOKEN_HOSTS="))
    }

    @Test func plainHTTPToGoogleIsRefused() throws {
        let message = try #require(refusal("http://sts.googleapis.com/v1/token", .securityTokenService))
        #expect(message.contains("names http://sts.googleapis.com, not HTTPS"), "\(message)")
    }

    @Test(arguments: ["http://127.0.0.1:8080/v1/token", "http://localhost:1/x", "http://[::1]:9/x", "https://127.1.2.3/x"])
    func loopbackPassesOverAnyScheme(url: String) {
        #expect(refusal(url, .securityTokenService) == nil)
        #expect(refusal(url, .iamCredentials) == nil)
    }

    @Test func theVariableAllowsNamedHostsOverHTTPSOnly() throws {
        let environment = ["FCMCTL_ALLOW_TOKEN_HOSTS": "sts.example-universe.com, iam.example.com:8443"]
        #expect(refusal("https://sts.example-universe.com/v1/token", .securityTokenService, environment: environment) == nil)
        #expect(refusal("https://iam.example.com:8443/v1/x", .iamCredentials, environment: environment) == nil)
        #expect(refusal("https://iam.example.com/v1/x", .iamCredentials, environment: environment) != nil, "another port")
        #expect(refusal("https://other.example.com/v1/token", .securityTokenService, environment: environment) != nil)
        let plain = try #require(refusal("http://sts.example-universe.com/v1/token", .securityTokenService, environment: environment))
        #expect(plain.contains("not HTTPS"))
    }

    @Test func aURLCurlCannotParseIsRefused() throws {
        let message = try #require(refusal("not a url", .securityTokenService))
        #expect(message == "/creds.json: token_url is not a URL (expected https://sts.googleapis.com/…)")
    }
}
