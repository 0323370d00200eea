"""fcm-emulator's OAuth and metadata token endpoints, driven by google-auth and hand-made JWTs signed with
the `cryptography` package: implementations independent of the emulator's own."""
import base64
import json
import os
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

import google.auth.credentials
import google.auth.exceptions
import google.auth.transport.requests
import pytest
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa
from google.oauth2 import service_account

from test_firebase_admin import PROJECT, Emulator

SCOPE = "https://www.googleapis.com/auth/firebase.messaging"


@pytest.fixture
def emulator(tmp_path, monkeypatch):
    instance = Emulator(tmp_path, "--accept-refresh-token", "1//refresh-me")
    instance.admin("POST", "/emulator/v1/registrations", {"registrations": [{"token": "a:APA91b"}]})  # what fcm_status reads
    monkeypatch.setattr(
        google.auth.credentials.CredentialsWithRegionalAccessBoundary,
        "_is_regional_access_boundary_lookup_required", lambda self: False)
    yield instance
    instance.stop()


def b64(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def assertion(key, claims):
    header = b64(json.dumps({"alg": "RS256", "typ": "JWT"}).encode())
    payload = b64(json.dumps(claims).encode())
    signature = key.sign(f"{header}.{payload}".encode(), padding.PKCS1v15(), hashes.SHA256())
    return f"{header}.{payload}.{b64(signature)}"


def post_form(url, fields, headers=None):
    request = urllib.request.Request(url, data=urllib.parse.urlencode(fields).encode(), method="POST", headers=headers or {})
    try:
        with urllib.request.urlopen(request) as response:
            return response.status, json.load(response)
    except urllib.error.HTTPError as error:
        return error.code, json.load(error)


def account(emulator):
    with open(emulator.account) as handle:
        info = json.load(handle)
    key = serialization.load_pem_private_key(info["private_key"].encode(), password=None)
    return info, key


def claims(info, **overrides):
    now = int(time.time())
    base = {"iss": info["client_email"], "scope": SCOPE, "aud": info["token_uri"], "iat": now, "exp": now + 3600}
    base.update(overrides)
    return base


# The emulator's project: the principals these tokens stand for (its service account, its metadata server's
# account, a user of it) hold roles/firebasecloudmessaging.admin there and nowhere else.
READ = f"/v1/projects/{PROJECT}/registrations/a%3AAPA91b/topicSubscriptions"


def fcm_status(emulator, token, path=READ):
    return fcm_answer(emulator, token, path)[0]


def fcm_answer(emulator, token, path):
    request = urllib.request.Request(f"{emulator.base}{path}", headers={"Authorization": f"Bearer {token}", "project_id": "1"})
    try:
        with urllib.request.urlopen(request) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def test_google_auth_service_account_flow_yields_a_working_token(emulator):
    credentials = service_account.Credentials.from_service_account_file(emulator.account, scopes=[SCOPE])
    credentials.refresh(google.auth.transport.requests.Request())
    assert credentials.token.startswith("ya29.")
    assert fcm_status(emulator, credentials.token) == 200
    assert fcm_status(emulator, "ya29.forged") == 401


def test_assertion_signed_by_another_key_is_invalid_grant(emulator):
    info, _ = account(emulator)
    stranger = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    status, body = post_form(info["token_uri"], {
        "grant_type": "urn:ietf:params:oauth:grant-type:jwt-bearer", "assertion": assertion(stranger, claims(info))})
    assert (status, body) == (400, {"error": "invalid_grant", "error_description": "Invalid JWT Signature."})


@pytest.mark.parametrize("overrides, error, fragment", [
    ({"exp_offset": 7200}, "invalid_grant", "short-lived token (60 minutes)"),
    ({"expired": True}, "invalid_grant", "short-lived token (60 minutes)"),
    ({"aud": "https://example.com/token"}, "invalid_grant", "Failed audience check"),
    ({"scope": ""}, "invalid_scope", "Invalid OAuth scope"),
])
def test_bad_claims_are_refused_like_google(emulator, overrides, error, fragment):
    info, key = account(emulator)
    now = int(time.time())
    extra = {}
    if "exp_offset" in overrides:
        extra["exp"] = now + overrides["exp_offset"]
    elif overrides.get("expired"):
        extra.update(iat=now - 7200, exp=now - 3600)
    else:
        extra.update(overrides)
    status, body = post_form(info["token_uri"], {
        "grant_type": "urn:ietf:params:oauth:grant-type:jwt-bearer", "assertion": assertion(key, claims(info, **extra))})
    assert status == 400 and body["error"] == error and fragment in body["error_description"]


def test_unknown_grant_type_and_refresh_token_grant(emulator):
    url = f"{emulator.base}/token"
    assert post_form(url, {"grant_type": "password"})[1]["error"] == "unsupported_grant_type"
    status, body = post_form(url, {"grant_type": "refresh_token", "refresh_token": "1//refresh-me", "client_id": "c", "client_secret": "s"})
    assert status == 200 and fcm_status(emulator, body["access_token"]) == 200
    assert post_form(url, {"grant_type": "refresh_token", "refresh_token": "1//stolen", "client_id": "c"})[1]["error"] == "invalid_grant"


def test_metadata_server_requires_the_flavor_header(emulator):
    url = f"{emulator.base}/computeMetadata/v1/instance/service-accounts/default/token"
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(url)
    assert refused.value.code == 403
    with urllib.request.urlopen(urllib.request.Request(url, headers={"Metadata-Flavor": "Google"})) as response:
        assert response.headers["Metadata-Flavor"] == "Google"
        token = json.load(response)
    assert token["token_type"] == "Bearer" and token["expires_in"] > 3000
    assert fcm_status(emulator, token["access_token"]) == 200
    project = urllib.request.Request(f"{emulator.base}/computeMetadata/v1/project/project-id", headers={"Metadata-Flavor": "Google"})
    with urllib.request.urlopen(project) as response:
        assert response.read().decode() == "sdk-test-project"


def test_expired_tokens_stop_working(emulator):
    credentials = service_account.Credentials.from_service_account_file(emulator.account, scopes=[SCOPE])
    credentials.refresh(google.auth.transport.requests.Request())
    emulator.admin("POST", "/emulator/v1/tokens:expire", {})
    assert fcm_status(emulator, credentials.token) == 401


def test_any_scope_gets_a_token_and_fcm_refuses_one_without_its_scopes(emulator):
    """Google's token endpoint issues a token for any scope; each FCM API answers 403 insufficient scopes."""
    credentials = service_account.Credentials.from_service_account_file(
        emulator.account, scopes=["https://www.googleapis.com/auth/userinfo.email"])
    credentials.refresh(google.auth.transport.requests.Request())
    for path in (READ, "/iid/info/a%3AAPA91b?details=true",
                 "/fcm/notification?notification_key_name=g"):
        status, body = fcm_answer(emulator, credentials.token, path)
        error = json.loads(body)["error"]
        assert (status, error["status"], error["message"]) == (403, "PERMISSION_DENIED", "Request had insufficient authentication scopes.")
        assert error["details"][0]["reason"] == "ACCESS_TOKEN_SCOPE_INSUFFICIENT"
    with urllib.request.urlopen(f"{emulator.base}/tokeninfo?access_token={credentials.token}") as response:
        assert json.load(response)["scope"] == "https://www.googleapis.com/auth/userinfo.email"
    cloud_platform = service_account.Credentials.from_service_account_file(
        emulator.account, scopes=["https://www.googleapis.com/auth/cloud-platform"])
    cloud_platform.refresh(google.auth.transport.requests.Request())
    assert fcm_status(emulator, cloud_platform.token) == 200


COMPUTE_ENGINE_CLIENT = """
import json, os
import google.auth, google.auth.credentials, google.auth.transport.requests
from google.auth import compute_engine
# The regional access boundary lookup would reach iamcredentials.googleapis.com; nothing here may reach Google.
google.auth.credentials.CredentialsWithRegionalAccessBoundary._is_regional_access_boundary_lookup_required = lambda self: False
request = google.auth.transport.requests.Request()
explicit = compute_engine.Credentials()
explicit.refresh(request)
found, project = google.auth.default()
found.refresh(request)
print(json.dumps({"token": explicit.token, "email": explicit.service_account_email, "scopes": list(explicit.scopes),
                  "default": type(found).__module__ + "." + type(found).__name__, "project": project, "default_token": found.token}))
"""


def compute_engine_client(emulator, tmp_path):
    """google-auth in a process of its own: it reads GCE_METADATA_HOST and GCE_METADATA_IP when imported."""
    host = emulator.base[len("http://"):]
    environment = {k: v for k, v in os.environ.items() if not k.startswith(("GOOGLE_", "GCE_", "CLOUDSDK_"))}
    environment.update(GCE_METADATA_HOST=host, GCE_METADATA_IP=host, CLOUDSDK_CONFIG=str(tmp_path / "no-gcloud"), HOME=str(tmp_path))
    result = subprocess.run([sys.executable, "-c", COMPUTE_ENGINE_CLIENT], env=environment, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_google_auth_compute_engine_credentials_refresh_at_the_metadata_server(emulator, tmp_path):
    seen = compute_engine_client(emulator, tmp_path)
    assert seen["email"] == "123456789012-compute@developer.gserviceaccount.com"
    assert seen["scopes"] == ["https://www.googleapis.com/auth/cloud-platform"]
    assert seen["default"] == "google.auth.compute_engine.credentials.Credentials"
    assert seen["project"] == "sdk-test-project"
    assert fcm_status(emulator, seen["token"]) == 200 and fcm_status(emulator, seen["default_token"]) == 200
    info = urllib.request.Request(
        f"{emulator.base}/computeMetadata/v1/instance/service-accounts/default/?recursive=true", headers={"Metadata-Flavor": "Google"})
    with urllib.request.urlopen(info) as response:
        assert response.headers["Metadata-Flavor"] == "Google"
        assert json.load(response) == {
            "aliases": ["default"], "email": seen["email"], "scopes": ["https://www.googleapis.com/auth/cloud-platform"]}


def test_a_vm_whose_access_scopes_leave_out_fcm_gets_tokens_fcm_refuses(tmp_path, monkeypatch):
    from test_firebase_admin import Emulator

    instance = Emulator(tmp_path, "--metadata-scope", "https://www.googleapis.com/auth/devstorage.read_only")
    try:
        seen = compute_engine_client(instance, tmp_path)
        assert seen["scopes"] == ["https://www.googleapis.com/auth/devstorage.read_only"]
        assert fcm_status(instance, seen["token"]) == 403
    finally:
        instance.stop()
