"""The gcs state backend signs in with the same credentials as FCM: fcmctl reaches fake-gcs-server through
FCMCTL_STORAGE_ENDPOINT (credentials kept) and a stand-in for Google's front end that asks fcm-emulator's
tokeninfo whether each request's bearer token is valid at that moment. The emulator issues 5-second tokens
and the apply takes longer, so the state requests late in the run need tokens refreshed during it."""
import http.server
import json
import threading
import urllib.error
import urllib.request

import pytest

from fcmharness import Emulator, FakeGCS, run

SUBJECT = "eyJhbGciOiJSUzI1NiJ9.ci-subject.sig"
ACCOUNT = "fcm-state@acme.iam.gserviceaccount.com"


class CheckingFrontEnd:
    """Forwards to fake-gcs-server only requests whose bearer token the emulator calls valid; 401 otherwise."""

    def __init__(self, upstream, emulator):
        self.seen = []  # (method, path, token, accepted)
        front = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def relay(self):
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else None
                token = (self.headers.get("Authorization") or "").removeprefix("Bearer ")
                accepted = front.valid(emulator, token)
                front.seen.append((self.command, self.path, token, accepted))
                if not accepted:
                    self.answer(401, {"Content-Type": "application/json"}, b'{"error": {"code": 401, "status": "UNAUTHENTICATED"}}')
                    return
                headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "authorization", "content-length")}
                request = urllib.request.Request(upstream + self.path, data=body, method=self.command, headers=headers)
                try:
                    with urllib.request.urlopen(request) as response:
                        self.answer(response.status, dict(response.headers), response.read())
                except urllib.error.HTTPError as error:
                    self.answer(error.code, dict(error.headers), error.read())

            def answer(self, status, headers, data):
                self.send_response(status)
                for name, value in headers.items():
                    if name.lower() not in ("content-length", "transfer-encoding", "connection", "date", "server"):
                        self.send_header(name, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = relay

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @staticmethod
    def valid(emulator, token):
        try:
            with urllib.request.urlopen(f"{emulator.base}/tokeninfo?access_token={token}") as response:
                return int(json.load(response)["expires_in"]) >= 0
        except urllib.error.HTTPError:
            return False

    def stop(self):
        self.server.shutdown()


@pytest.fixture
def world(tmp_path):
    gcs = FakeGCS()
    gcs.create_bucket("fcm-state")
    # The impersonated account belongs to project acme; IAM grants it FCM on the manifest's project.
    emulator = Emulator("--accept-subject-token", SUBJECT, "--token-lifetime", "5s",
                        "--iam", f"{ACCOUNT}=roles/firebasecloudmessaging.admin@gcs-creds")
    front = CheckingFrontEnd(gcs.base, emulator)
    yield gcs, emulator, front
    front.stop()
    emulator.stop()
    gcs.stop()


def test_state_requests_carry_live_tokens_through_a_run_longer_than_a_token(world, tmp_path):
    gcs, emulator, front = world
    subject = tmp_path / "oidc.txt"
    subject.write_text(SUBJECT)
    credentials = tmp_path / "wif.json"
    credentials.write_text(json.dumps({
        "type": "external_account",
        "audience": "//iam.googleapis.com/projects/1/locations/global/workloadIdentityPools/ci/providers/gh",
        "subject_token_type": "urn:ietf:params:oauth:token-type:jwt", "token_url": f"{emulator.base}/v1/token",
        "credential_source": {"file": str(subject)},
        "service_account_impersonation_url": f"{emulator.base}/v1/projects/-/serviceAccounts/{ACCOUNT}:generateAccessToken",
    }))
    members = "".join(f'      - "cred-{i:04d}:APA91b{"c" * 30}"\n' for i in range(240))
    manifest = tmp_path / "fcmctl.yaml"
    manifest.write_text('project: {id: gcs-creds, senderId: "7"}\nstate: {backend: gcs, bucket: fcm-state, prefix: ci}\n'
                        f"topics:\n  news:\n    members:\n{members}")
    env = {"FCM_ENDPOINT": emulator.base, "FCMCTL_STORAGE_ENDPOINT": front.base, "GOOGLE_APPLICATION_CREDENTIALS": str(credentials),
           "HOME": str(tmp_path), "STORAGE_EMULATOR_HOST": ""}

    # 240 changes at 20 a second: about 12 s, more than two lives of a token.
    applied = run(["apply", "--auto-approve", "-f", str(manifest), "--qps", "20", "--parallelism", "4"], env=env)
    assert applied.returncode == 0, applied.stderr
    assert "0 failed" in applied.stdout

    assert front.seen, "the state went through the checking front end"
    refused = [(method, path) for method, path, _, accepted in front.seen if not accepted]
    assert refused == [], refused
    assert len({token for _, _, token, _ in front.seen}) >= 2, "state requests late in the run used a refreshed token"
    assert gcs.names("fcm-state") == ["ci/state.json", "ci/state.serial"]

    plan = run(["plan", "--detailed-exitcode", "-f", str(manifest)], env=env)
    assert plan.returncode == 0, plan.stdout + plan.stderr
