"""A header is one line. An access token or a credentials file's `credential_source.headers` holding CR or LF
would add headers of its own to a request (header injection): fcmctl refuses to send such a request, at once,
with a message, and retries nothing."""
import json
import time

from fcmharness import Emulator, run

MANIFEST = 'project: {id: p, senderId: "1"}\ntopics:\n  news: ["hdr-1:APA91bhhhhhhhhhhhhhhhhhhhh"]\n'


def requests(emulator):
    return emulator.request("GET", "/emulator/v1/requests")["requests"]


def test_an_access_token_with_a_line_break_is_never_sent(tmp_path):
    (tmp_path / "fcmctl.yaml").write_text(MANIFEST)
    emulator = Emulator()
    try:
        started = time.monotonic()
        result = run(["plan", "-f", str(tmp_path), "--state", str(tmp_path / "s.json")],
                     env={"FCM_ENDPOINT": emulator.base, "FCM_ACCESS_TOKEN": "owner\r\nX-Injected: yes", "HOME": str(tmp_path)})
        assert result.returncode == 1, result.stdout + result.stderr
        assert "holds a line break (CR, LF or NUL)" in result.stderr and "was not sent" in result.stderr
        assert "X-Injected" not in result.stderr, "the header's value is not echoed"
        assert time.monotonic() - started < 30, "refused at once, not retried"
        assert requests(emulator) == []
    finally:
        emulator.stop()


def test_a_credentials_files_header_with_a_line_break_is_never_sent(tmp_path):
    (tmp_path / "fcmctl.yaml").write_text(MANIFEST)
    emulator = Emulator()
    try:
        credentials = {
            "type": "external_account", "audience": "//iam.googleapis.com/projects/1/locations/global/workloadIdentityPools/p/providers/q",
            "subject_token_type": "urn:ietf:params:oauth:token-type:jwt", "token_url": f"{emulator.base}/v1/token",
            "credential_source": {"url": f"{emulator.base}/emulator/v1/oidc-token",
                                  "headers": {"Authorization": "Bearer x\r\nX-Injected: yes"},
                                  "format": {"type": "json", "subject_token_field_name": "value"}},
        }
        path = tmp_path / "creds.json"
        path.write_text(json.dumps(credentials))
        result = run(["plan", "-f", str(tmp_path), "--state", str(tmp_path / "s.json")],
                     env={"FCM_ENDPOINT": emulator.base, "GOOGLE_APPLICATION_CREDENTIALS": str(path), "HOME": str(tmp_path)})
        assert result.returncode == 1, result.stdout + result.stderr
        assert "holds a line break (CR, LF or NUL)" in result.stderr, result.stderr
        assert requests(emulator) == []
    finally:
        emulator.stop()
