"""`fcmctl send` when FCM refuses for reasons that are not the message's: a token without FCM's scopes, a
registration of another project (SENDER_ID_MISMATCH), the project's APNs or web push credentials
(THIRD_PARTY_AUTH_ERROR). Each exits 1 with a message that says what to fix, after exactly one request."""
import json

import google.auth.credentials
import google.auth.transport.requests
import pytest
from google.oauth2 import service_account

from fcmharness import Emulator, run

TOKEN = "dev0:APA91b" + "x" * 40


@pytest.fixture
def emulator(tmp_path, monkeypatch):
    instance = Emulator("--service-account-out", str(tmp_path / "sa.json"))
    instance.account = str(tmp_path / "sa.json")
    # google-auth looks up regional access boundaries on Google's servers; there are none here.
    monkeypatch.setattr(
        google.auth.credentials.CredentialsWithRegionalAccessBoundary, "_is_regional_access_boundary_lookup_required", lambda self: False)
    yield instance
    instance.stop()


def sends(emulator):
    return [entry["status"] for entry in emulator.request("GET", "/emulator/v1/requests")["requests"] if entry["endpoint"] == "messages.send"]


def send(emulator, tmp_path, env):
    # No credentials of this machine's own may be found: only what each test gives.
    clean = {"HOME": str(tmp_path), "CLOUDSDK_CONFIG": str(tmp_path / "no-gcloud"), "GOOGLE_APPLICATION_CREDENTIALS": "", "NO_GCE_CHECK": "true"}
    return run(["send", "--project", "p", "--token", TOKEN, "--body", "hello"], env={**clean, **env})


def test_a_token_without_fcm_scopes_exits_1_and_says_which_scopes(emulator, tmp_path):
    credentials = service_account.Credentials.from_service_account_file(
        emulator.account, scopes=["https://www.googleapis.com/auth/userinfo.email"])
    credentials.refresh(google.auth.transport.requests.Request())
    result = send(emulator, tmp_path, {"FCM_ENDPOINT": emulator.base, "FCM_ACCESS_TOKEN": credentials.token})
    assert result.returncode == 1, result.stderr
    assert "ACCESS_TOKEN_SCOPE_INSUFFICIENT Request had insufficient authentication scopes." in result.stderr
    assert "https://www.googleapis.com/auth/firebase.messaging" in result.stderr and "cloud-platform" in result.stderr
    assert credentials.token not in result.stderr + result.stdout
    assert sends(emulator) == [403], "a 403 is not retried"


def test_a_vm_without_fcm_access_scopes_exits_1(tmp_path):
    instance = Emulator("--metadata-scope", "https://www.googleapis.com/auth/devstorage.read_only")
    try:
        result = send(instance, tmp_path, {"FCM_ENDPOINT": instance.base, "GCE_METADATA_HOST": instance.host, "NO_GCE_CHECK": ""})
        assert result.returncode == 1, result.stderr
        assert "ACCESS_TOKEN_SCOPE_INSUFFICIENT" in result.stderr and "access scope" in result.stderr
        assert sends(instance) == [403]
    finally:
        instance.stop()


@pytest.mark.parametrize("faults, status, words", [
    ({"failing_registrations": {TOKEN: "SENDER_ID_MISMATCH"}}, 403,
     ["SENDER_ID_MISMATCH SenderId mismatch", "another Firebase project"]),
    ({"error_rates": [{"endpoint": "messages.send", "fcm_error_code": "THIRD_PARTY_AUTH_ERROR", "rate": 1}]}, 401,
     ["THIRD_PARTY_AUTH_ERROR Auth error from APNS or Web Push Service", "APNs auth key", "fcmctl's own credentials are fine"]),
])
def test_send_id_mismatch_and_third_party_auth_errors_exit_1_with_advice(emulator, tmp_path, faults, status, words):
    emulator.request("PUT", "/emulator/v1/faults", faults)
    result = send(emulator, tmp_path, {"FCM_EMULATOR_HOST": emulator.host})
    assert result.returncode == 1, result.stderr
    for text in words:
        assert text in result.stderr
    # A 401 about the project's push credentials is no reason to refresh fcmctl's token and send again.
    assert sends(emulator) == [status]
