"""The official firebase-admin Python SDK (7.x) against fcm-emulator.

Only the SDK's base URLs and credentials change: the service-account file is written by the emulator
(--service-account-out), so the SDK signs a real RS256 JWT and exchanges it at the emulator's token_uri.
"""
import json
import os
import re
import subprocess
import urllib.request
import uuid
import warnings

import firebase_admin
import google.auth.credentials
import pytest
from firebase_admin import credentials, exceptions, messaging

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EMULATOR = os.environ.get("FCM_EMULATOR_BIN", os.path.join(ROOT, ".build/debug/fcm-emulator"))
PROJECT = "sdk-test-project"


class Emulator:
    def __init__(self, tmp_path, *flags):
        self.account = str(tmp_path / f"sa-{uuid.uuid4().hex}.json")
        self.process = subprocess.Popen(
            [EMULATOR, "--port", "0", "--project-id", PROJECT, "--service-account-out", self.account, *flags],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        line = self.process.stdout.readline()  # blocks until the emulator is listening
        assert line.startswith("fcm-emulator listening on http://"), line
        self.base = line.strip().split(" on ")[1]

    def stop(self):
        self.process.terminate()
        self.process.wait(timeout=10)

    def admin(self, method, path, body=None):
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(self.base + path, data=data, method=method, headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request) as response:
            return json.load(response)

    def topics(self, registration):
        for item in self.admin("GET", "/emulator/v1/state")["registrations"]:
            if item["id"] == registration:
                return item["topics"]
        return []

    def inbox(self, registration):
        return self.admin("GET", f"/emulator/v1/registrations/{registration}/inbox")["messages"]

    def app(self):
        """A firebase-admin app whose messaging service talks to this emulator."""
        app = firebase_admin.initialize_app(credentials.Certificate(self.account), name=uuid.uuid4().hex)
        service = messaging._get_messaging_service(app)
        service._fcm_url = f"{self.base}/v1/projects/{PROJECT}/messages:send"
        service._fcm_topic_url = f"{self.base}/v1/projects/{PROJECT}/registrations"
        return app


TOKENS = [f"sdk{i}:APA91b" + "x" * 40 for i in range(3)]


def started(tmp_path, monkeypatch, *flags):
    # The emulator's default mode, as strict as FCM: the suite's registrations are made known to the project.
    instance = Emulator(tmp_path, *flags)
    instance.admin("POST", "/emulator/v1/registrations", {"project": PROJECT, "registrations": [{"token": t} for t in TOKENS]})
    monkeypatch.setattr(messaging._MessagingService, "IID_URL", instance.base)
    # google-auth looks up a "regional access boundary" at iamcredentials.googleapis.com after each token
    # refresh. That is not part of FCM and this machine must not reach Google, so the lookup is switched off.
    monkeypatch.setattr(
        google.auth.credentials.CredentialsWithRegionalAccessBoundary,
        "_is_regional_access_boundary_lookup_required", lambda self: False)
    return instance


@pytest.fixture
def emulator(tmp_path, monkeypatch):
    instance = started(tmp_path, monkeypatch)
    yield instance
    instance.stop()


def test_subscribe_and_unsubscribe_with_the_v1_api(emulator):
    app = emulator.app()
    response = messaging.subscribe_to_topic(TOKENS, "news", app=app)
    assert (response.success_count, response.failure_count) == (3, 0)
    assert all(emulator.topics(t) == ["news"] for t in TOKENS)
    # Subscribing again meets 409 ALREADY_EXISTS, which the SDK counts as success.
    again = messaging.subscribe_to_topic(TOKENS[:1], "news", app=app)
    assert (again.success_count, again.failure_count) == (1, 0)
    statuses = [r["status"] for r in emulator.admin("GET", "/emulator/v1/requests")["requests"] if r["endpoint"] == "topics.create"]
    assert statuses == [200, 200, 200, 409]
    gone = messaging.unsubscribe_from_topic(TOKENS, "news", app=app)
    assert (gone.success_count, gone.failure_count) == (3, 0)
    assert all(emulator.topics(t) == [] for t in TOKENS)


def test_legacy_iid_batch_reports_per_token_results_in_order(emulator):
    app = emulator.app()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        response = messaging.subscribe_to_topic_legacy([TOKENS[0], "not a token", TOKENS[1]], "/topics/sports", app=app)
        assert (response.success_count, response.failure_count) == (2, 1)
        assert [(e.index, e.reason) for e in response.errors] == [(1, "INVALID_ARGUMENT")]
        assert emulator.topics(TOKENS[0]) == ["sports"]
        removed = messaging.unsubscribe_from_topic_legacy([TOKENS[0]], "sports", app=app)
        assert removed.success_count == 1
    assert emulator.topics(TOKENS[0]) == []


IMAGE = "https://example.com/pizza-monster.png"


def image_message(**target):
    return messaging.Message(
        notification=messaging.Notification(title="Sparky says hello!", image=IMAGE),
        android=messaging.AndroidConfig(notification=messaging.AndroidNotification(image=IMAGE)),
        apns=messaging.APNSConfig(payload=messaging.APNSPayload(aps=messaging.Aps(mutable_content=True)),
                                  fcm_options=messaging.APNSFCMOptions(image=IMAGE)),
        webpush=messaging.WebpushConfig(headers={"image": IMAGE}),
        data={"kind": "demo"},
        **target)


def test_send_to_a_token_a_topic_and_a_condition_with_images(emulator):
    app = emulator.app()
    messaging.subscribe_to_topic([TOKENS[0]], "alpha", app=app)
    messaging.subscribe_to_topic([TOKENS[1]], "beta", app=app)
    name = messaging.send(image_message(token=TOKENS[2]), app=app)
    assert re.fullmatch(rf"projects/{PROJECT}/messages/.+", name)
    delivered = emulator.inbox(TOKENS[2])
    assert [m["name"] for m in delivered] == [name]
    assert delivered[0]["message"]["android"]["notification"]["image"] == IMAGE
    assert delivered[0]["message"]["apns"]["fcm_options"]["image"] == IMAGE
    messaging.send(image_message(topic="alpha"), app=app)
    assert len(emulator.inbox(TOKENS[0])) == 1 and emulator.inbox(TOKENS[1]) == []
    messaging.send(image_message(condition="'alpha' in topics || ('beta' in topics && !('gamma' in topics))"), app=app)
    assert len(emulator.inbox(TOKENS[0])) == 2 and len(emulator.inbox(TOKENS[1])) == 1


def test_dry_run_validates_without_delivering(emulator):
    app = emulator.app()
    messaging.subscribe_to_topic([TOKENS[0]], "alpha", app=app)
    for target in ({"token": TOKENS[0]}, {"topic": "alpha"}, {"condition": "'alpha' in topics"}):
        assert messaging.send(image_message(**target), dry_run=True, app=app) == f"projects/{PROJECT}/messages/fake_message_id"
    assert emulator.inbox(TOKENS[0]) == []
    with pytest.raises(messaging.exceptions.InvalidArgumentError):
        messaging.send(messaging.Message(topic="x", data={"from": "reserved"}), dry_run=True, app=app)
    with pytest.raises(messaging.exceptions.InvalidArgumentError):
        condition = " && ".join(f"'t{i}' in topics" for i in range(6))
        messaging.send(messaging.Message(condition=condition), dry_run=True, app=app)


def test_uninstalled_registration_raises_unregistered_error(emulator):
    app = emulator.app()
    emulator.admin("POST", "/emulator/v1/registrations", {"registrations": [{"token": TOKENS[0]}]})
    emulator.admin("DELETE", f"/emulator/v1/registrations/{TOKENS[0]}")
    with pytest.raises(messaging.UnregisteredError):
        messaging.send(messaging.Message(token=TOKENS[0], data={"a": "b"}), app=app)


def test_message_quota_raises_quota_exceeded_error(emulator):
    app = emulator.app()
    emulator.admin("PUT", "/emulator/v1/quotas", {"subscription_qps": 3000, "messages_per_minute": 1})
    messaging.send(messaging.Message(token=TOKENS[0], data={"n": "1"}), app=app)
    with pytest.raises(messaging.QuotaExceededError):
        messaging.send(messaging.Message(token=TOKENS[0], data={"n": "2"}), app=app)


def test_unknown_registration_raises_unregistered_error(emulator):
    app = emulator.app()
    with pytest.raises(messaging.UnregisteredError):
        messaging.send(messaging.Message(token="never-registered:APA91b" + "y" * 40, data={"a": "b"}), app=app)


def test_another_projects_registration_raises_sender_id_mismatch(emulator):
    app = emulator.app()
    stranger = "elsewhere:APA91b" + "z" * 40
    emulator.admin("POST", "/emulator/v1/registrations", {"project": "another-project", "registrations": [{"token": stranger}]})
    with pytest.raises(messaging.SenderIdMismatchError):
        messaging.send(messaging.Message(token=stranger, data={"a": "b"}), app=app)
    response = messaging.subscribe_to_topic([stranger, TOKENS[0]], "news", app=app)
    assert (response.success_count, response.failure_count) == (1, 1)
    assert emulator.topics(stranger) == []


def test_injected_sender_id_mismatch_raises_sender_id_mismatch_error(emulator):
    app = emulator.app()
    emulator.admin("PUT", "/emulator/v1/faults", {"failing_registrations": {TOKENS[0]: "SENDER_ID_MISMATCH"}})
    with pytest.raises(messaging.SenderIdMismatchError) as refused:
        messaging.send(messaging.Message(token=TOKENS[0], data={"a": "b"}), app=app)
    assert refused.value.http_response.status_code == 403
    assert refused.value.http_response.json()["error"]["status"] == "PERMISSION_DENIED"
    messaging.send(messaging.Message(token=TOKENS[1], data={"a": "b"}), app=app)  # only that registration fails


def test_injected_third_party_auth_error_raises_third_party_auth_error(emulator):
    app = emulator.app()
    emulator.admin("PUT", "/emulator/v1/faults", {
        "error_rates": [{"endpoint": "messages.send", "fcm_error_code": "THIRD_PARTY_AUTH_ERROR", "rate": 1}]})
    with pytest.raises(messaging.ThirdPartyAuthError) as refused:
        messaging.send(messaging.Message(token=TOKENS[0], data={"a": "b"}), app=app)
    assert refused.value.http_response.status_code == 401
    assert refused.value.http_response.json()["error"]["status"] == "UNAUTHENTICATED"


def test_a_token_without_fcm_scopes_is_refused_with_insufficient_scopes(emulator):
    """Google issues a token for any scope; FCM refuses one without its scopes, as a PermissionDeniedError."""
    from google.oauth2 import service_account

    class UserinfoOnly(credentials.Base):
        def get_credential(self):
            return service_account.Credentials.from_service_account_file(
                emulator.account, scopes=["https://www.googleapis.com/auth/userinfo.email"])

    app = firebase_admin.initialize_app(UserinfoOnly(), {"projectId": PROJECT}, name=uuid.uuid4().hex)
    service = messaging._get_messaging_service(app)
    service._fcm_url = f"{emulator.base}/v1/projects/{PROJECT}/messages:send"
    with pytest.raises(exceptions.PermissionDeniedError) as refused:
        messaging.send(messaging.Message(token=TOKENS[0], data={"a": "b"}), app=app)
    error = refused.value.http_response.json()["error"]
    assert (error["code"], error["status"], error["message"]) == (
        403, "PERMISSION_DENIED", "Request had insufficient authentication scopes.")
    assert error["details"] == [{
        "@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "ACCESS_TOKEN_SCOPE_INSUFFICIENT", "domain": "googleapis.com",
        "metadata": {"service": "fcm.googleapis.com", "method": "google.firebase.fcm.v1.FcmService.SendMessage"}}]
    # Refused before FCM looked at the message: nothing was delivered.
    assert emulator.inbox(TOKENS[0]) == []


def iam_denial(refused):
    """The permission and project of an IAM refusal, from google.rpc.Status's ErrorInfo."""
    error = refused.value.http_response.json()["error"]
    assert (error["code"], error["status"]) == (403, "PERMISSION_DENIED")
    (info,) = error["details"]
    assert (info["@type"], info["reason"]) == ("type.googleapis.com/google.rpc.ErrorInfo", "IAM_PERMISSION_DENIED")
    assert info["metadata"]["permission"] in error["message"]
    return info["metadata"]["permission"], info["metadata"]["resource"]


def test_another_projects_account_raises_permission_denied(emulator):
    """The key's account holds FCM admin on its own project only: pointed at another, the SDK raises
    PermissionDeniedError naming the permission, and nothing changes."""
    app = emulator.app()
    service = messaging._get_messaging_service(app)
    service._fcm_url = f"{emulator.base}/v1/projects/someone-else/messages:send"
    service._fcm_topic_url = f"{emulator.base}/v1/projects/someone-else/registrations"
    with pytest.raises(exceptions.PermissionDeniedError) as refused:
        messaging.send(messaging.Message(token=TOKENS[0], data={"a": "b"}), app=app)
    assert iam_denial(refused) == ("cloudmessaging.messages.create", "projects/someone-else")
    response = messaging.subscribe_to_topic([TOKENS[0]], "news", app=app)
    assert response.failure_count == 1
    assert emulator.topics(TOKENS[0]) == [] and emulator.inbox(TOKENS[0]) == []


def test_a_viewer_is_refused_sends_and_subscriptions(tmp_path, monkeypatch):
    """Granted roles/firebasecloudmessaging.viewer on its own project, the account loses the default admin there:
    sends and subscriptions, through both topic APIs, are refused."""
    viewer = f"fcmctl-test@{PROJECT}.iam.gserviceaccount.com=roles/firebasecloudmessaging.viewer@{PROJECT}"
    instance = started(tmp_path, monkeypatch, "--iam", viewer)
    try:
        app = instance.app()
        with pytest.raises(exceptions.PermissionDeniedError) as refused:
            messaging.send(messaging.Message(topic="news", data={"a": "b"}), app=app)
        assert iam_denial(refused) == ("cloudmessaging.messages.create", f"projects/{PROJECT}")
        response = messaging.subscribe_to_topic(TOKENS, "news", app=app)
        assert (response.success_count, response.failure_count) == (0, len(TOKENS))
        with pytest.raises(exceptions.PermissionDeniedError):
            messaging.subscribe_to_topic_legacy([TOKENS[0]], "news", app=app)
        assert instance.topics(TOKENS[0]) == []
    finally:
        instance.stop()
