"""The same credentials files, two clients: fcmctl and Google's own google-auth, each obtaining a token from
fcm-emulator's security token service and IAM Credentials. The emulator's request log keeps the fields each
client sent (secrets as digests); both clients must have sent the same exchange."""
import json

import google.auth
import google.auth.credentials
import google.auth.transport.requests
from google.auth import identity_pool
import pytest

from fcmharness import Emulator, ROOT, run

SUBJECT = "eyJhbGciOiJSUzI1NiJ9.github-oidc-subject.sig"
AUDIENCE = "//iam.googleapis.com/projects/123456/locations/global/workloadIdentityPools/ci/providers/github"
ACCOUNT = "fcm-deployer@acme-prod.iam.gserviceaccount.com"
SCOPES = ["https://www.googleapis.com/auth/firebase.messaging", "https://www.googleapis.com/auth/devstorage.read_write"]
QUICKSTART = f"{ROOT}/examples/quickstart"


@pytest.fixture
def emulator(monkeypatch):
    # What is compared here is how each client signs in, not what IAM lets the account do: the pool's identities
    # and the impersonated account may act on the quickstart's project, as before the emulator modelled IAM.
    instance = Emulator("--accept-subject-token", SUBJECT, "--oidc-request-token", "runner-request-token", "--iam-default", "any-project")
    # google-auth looks up regional access boundaries on Google's servers; there are none here.
    for cls in (google.auth.credentials.CredentialsWithRegionalAccessBoundary,):
        monkeypatch.setattr(cls, "_is_regional_access_boundary_lookup_required", lambda self: False, raising=False)
    yield instance
    instance.stop()


def token_requests(emulator):
    log = emulator.request("GET", "/emulator/v1/requests")["requests"]
    return [entry for entry in log if entry["endpoint"] in ("sts.token", "iam.generateAccessToken")]


def reset_log(emulator):
    emulator.request("POST", "/emulator/v1/reset")


def credentials_file(tmp_path, emulator, source, impersonate):
    document = {
        "type": "external_account", "audience": AUDIENCE, "subject_token_type": "urn:ietf:params:oauth:token-type:jwt",
        "token_url": f"{emulator.base}/v1/token", "credential_source": source,
    }
    if impersonate:
        document["service_account_impersonation_url"] = f"{emulator.base}/v1/projects/-/serviceAccounts/{ACCOUNT}:generateAccessToken"
    path = tmp_path / f"creds-{impersonate}.json"
    path.write_text(json.dumps(document))
    return str(path)


def google_auth_token(path):
    # Not load_credentials_from_file: it would also ask Cloud Resource Manager for the project, off this machine.
    credentials = identity_pool.Credentials.from_file(path, scopes=SCOPES)
    credentials.refresh(google.auth.transport.requests.Request())
    return credentials.token


def fcmctl_plan(emulator, path, tmp_path):
    return run(["plan", "--detailed-exitcode", "-f", QUICKSTART, "--state", str(tmp_path / "state.json")],
               env={"FCM_ENDPOINT": emulator.base, "GOOGLE_APPLICATION_CREDENTIALS": path, "HOME": str(tmp_path)})


def comparable(entries):
    """What each request asked for. A JSON null is an absent field to the API (google-auth sends
    `"delegates": null`, fcmctl leaves it out), so nulls are dropped before comparing."""
    return [(entry["endpoint"], entry["status"], {k: v for k, v in (entry.get("fields") or {}).items() if v != "null"})
            for entry in entries]


@pytest.mark.parametrize("impersonate", [False, True])
@pytest.mark.parametrize("kind", ["file", "url"])
def test_fcmctl_sends_what_google_auth_sends(emulator, tmp_path, kind, impersonate):
    if kind == "file":
        token_file = tmp_path / "oidc.json"
        token_file.write_text(json.dumps({"value": SUBJECT}))
        source = {"file": str(token_file), "format": {"type": "json", "subject_token_field_name": "value"}}
    else:
        source = {"url": f"{emulator.base}/emulator/v1/oidc-token?audience=fcmctl",
                  "headers": {"Authorization": "Bearer runner-request-token"},
                  "format": {"type": "json", "subject_token_field_name": "value"}}
    path = credentials_file(tmp_path, emulator, source, impersonate)

    token = google_auth_token(path)
    assert token.startswith("ya29.emulator-")
    by_google_auth = comparable(token_requests(emulator))
    reset_log(emulator)

    result = fcmctl_plan(emulator, path, tmp_path)
    assert result.returncode == 2, result.stderr
    by_fcmctl = comparable(token_requests(emulator))

    expected_endpoints = ["sts.token", "iam.generateAccessToken"] if impersonate else ["sts.token"]
    assert [entry[0] for entry in by_google_auth] == expected_endpoints
    assert by_fcmctl == by_google_auth
    assert all(status == 200 for _, status, _ in by_fcmctl)
    assert by_fcmctl[0][2]["subject_token"].startswith("sha256:")
