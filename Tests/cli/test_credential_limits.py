"""Credentials that are too large, or that would send a token to a host that is not Google's: the real fcmctl
refuses them by name, exits 1 at once, and sends nothing it should not. A 1 MiB access token once made `plan`
wait for ever (both curl loops); a 300 MiB credential_source.file crashed it under a 4 GiB address space."""
import base64
import http.server
import json
import os
import resource
import socket
import subprocess
import threading
import time

import pytest

from fcmharness import FCMCTL, Emulator

MANIFEST = 'project: {id: p, senderId: "1"}\ntopics:\n  news: ["lim-1:APA91bllllllllllllllllllll"]\n'
LOOPS = ["epoll", "poll"]
AUDIENCE = "//iam.googleapis.com/projects/1/locations/global/workloadIdentityPools/p/providers/q"
SUBJECT = "eyJhbGciOiJSUzI1NiJ9.limits-subject.sig"


def run_limited(args, env, address_space=None):
    """The built fcmctl with only `env` (and PATH), under an address-space limit if given; returns the result and
    how long it took."""
    def limit():
        if address_space:
            resource.setrlimit(resource.RLIMIT_AS, (address_space, address_space))

    started = time.monotonic()
    result = subprocess.run([FCMCTL, *args], capture_output=True, text=True, timeout=300, preexec_fn=limit,
                            env={"PATH": os.environ.get("PATH", "/usr/bin"), **env})
    return result, time.monotonic() - started


class TokenServer:
    """A token endpoint and metadata server on loopback answering every request with an access token of `size`
    bytes, counting requests."""

    def __init__(self, size):
        server = self
        self.requests = 0
        self.token = "t" * size

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def answer(self):
                server.requests += 1
                length = int(self.headers.get("Content-Length") or 0)
                if length:
                    self.rfile.read(length)
                body = json.dumps({"access_token": server.token, "expires_in": 3600, "token_type": "Bearer"}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Metadata-Flavor", "Google")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            do_GET = answer
            do_POST = answer

        self.http = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.host = f"127.0.0.1:{self.http.server_address[1]}"
        threading.Thread(target=self.http.serve_forever, daemon=True).start()

    def stop(self):
        self.http.shutdown()
        self.http.server_close()


class RecordingProxy:
    """What every request to a non-loopback host goes through (https_proxy, http_proxy): records the first line
    of each connection (`CONNECT host:443 …` or `POST http://host/… …`) and closes it. Nothing recorded means
    nothing was sent anywhere but loopback."""

    def __init__(self):
        self.lines = []
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(16)
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}"
        threading.Thread(target=self.serve, daemon=True).start()

    def serve(self):
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            with client:
                data = b""
                while b"\r\n" not in data:
                    chunk = client.recv(4096)
                    if not chunk:
                        break
                    data += chunk
                self.lines.append(data.split(b"\r\n")[0].decode(errors="replace"))

    def environment(self):
        return {"https_proxy": self.url, "http_proxy": self.url, "HTTPS_PROXY": self.url, "no_proxy": "127.0.0.1,localhost"}

    def stop(self):
        self.listener.close()


@pytest.fixture
def emulator():
    instance = Emulator("--accept-subject-token", SUBJECT, "--oidc-request-token", "runner-token", "--iam-default", "any-project")
    yield instance
    instance.stop()


def requests(emulator):
    return emulator.request("GET", "/emulator/v1/requests")["requests"]


def plan(tmp_path, env, address_space=None):
    (tmp_path / "fcmctl.yaml").write_text(MANIFEST)
    return run_limited(["plan", "-f", str(tmp_path), "--state", str(tmp_path / "state.json")],
                       {"HOME": str(tmp_path), "NO_GCE_CHECK": "true", **env}, address_space)


def service_account_key(path, token_uri):
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()).decode()
    path.write_text(json.dumps({"type": "service_account", "project_id": "p", "private_key_id": "k1", "private_key": pem,
                                "client_email": "limits@p.iam.gserviceaccount.com", "token_uri": token_uri}))
    return str(path)


@pytest.mark.parametrize("loop", LOOPS)
def test_a_one_mebibyte_access_token_ends_the_run_at_once(emulator, tmp_path, loop):
    server = TokenServer(1 << 20)
    try:
        result, seconds = plan(tmp_path, {"FCM_ENDPOINT": emulator.base, "GCE_METADATA_HOST": server.host, "FCMCTL_CURL_LOOP": loop})
        print(f"1 MiB token from the metadata server, {loop} loop: exit {result.returncode} in {seconds:.2f} s")
        assert result.returncode == 1, result.stdout + result.stderr
        assert seconds < 30, f"{seconds:.1f} s"
        assert f"the metadata server at {server.host}" in result.stderr, result.stderr
        assert "answered more than 1048576 bytes" in result.stderr, result.stderr
        assert "tttttttt" not in result.stdout + result.stderr, "the token is never printed"
        assert requests(emulator) == [], "no FCM request went out with the token"
    finally:
        server.stop()


@pytest.mark.parametrize("loop", LOOPS)
def test_an_access_token_past_sixteen_kib_is_refused_naming_the_token_endpoint(emulator, tmp_path, loop):
    server = TokenServer(64 << 10)
    try:
        key = service_account_key(tmp_path / "key.json", f"http://{server.host}/token")
        result, seconds = plan(tmp_path, {"FCM_ENDPOINT": emulator.base, "GOOGLE_APPLICATION_CREDENTIALS": key, "FCMCTL_CURL_LOOP": loop})
        assert result.returncode == 1, result.stdout + result.stderr
        assert seconds < 30
        assert f"the token endpoint http://{server.host}/token" in result.stderr, result.stderr
        assert "gave an access token of 65536 bytes, over the 16384 bytes (16 KiB) fcmctl sends" in result.stderr, result.stderr
        assert "tttttttt" not in result.stdout + result.stderr
        assert server.requests >= 1
        assert requests(emulator) == []
    finally:
        server.stop()


def test_an_fcm_access_token_past_sixteen_kib_is_refused(emulator, tmp_path):
    result, _ = plan(tmp_path, {"FCM_ENDPOINT": emulator.base, "FCM_ACCESS_TOKEN": "f" * (20 << 10)})
    assert result.returncode == 1
    assert "FCM_ACCESS_TOKEN gave an access token of 20480 bytes, over the 16384 bytes (16 KiB) fcmctl sends" in result.stderr, result.stderr
    assert "ffffffff" not in result.stderr
    assert requests(emulator) == []


def test_an_access_token_of_google_size_is_sent(emulator, tmp_path):
    """12,288 bytes, the most STS documents: fcmctl sends it, and FCM (the emulator, which never issued it) refuses it."""
    server = TokenServer(12288)
    try:
        result, _ = plan(tmp_path, {"FCM_ENDPOINT": emulator.base, "GCE_METADATA_HOST": server.host})
        assert result.returncode == 1
        assert "FCM answered 401 UNAUTHENTICATED" in result.stderr, result.stderr
        assert "over the 16384 bytes" not in result.stderr
        assert [(entry["endpoint"], entry["status"]) for entry in requests(emulator)][:1] == [("topics.list", 401)]
    finally:
        server.stop()


FOUR_GIB = 4 << 30


def sparse(path, size):
    with open(path, "wb") as handle:
        handle.truncate(size)
    return str(path)


def test_an_oversize_credentials_file_is_refused_by_name(emulator, tmp_path):
    big = sparse(tmp_path / "creds.json", 300 << 20)
    result, _ = plan(tmp_path, {"FCM_ENDPOINT": emulator.base, "GOOGLE_APPLICATION_CREDENTIALS": big}, FOUR_GIB)
    assert result.returncode == 1, (result.returncode, result.stderr)
    assert f"{big}: the credentials file is 314572800 bytes, over the 1048576 bytes (1 MiB) fcmctl reads" in result.stderr, result.stderr
    assert requests(emulator) == []


@pytest.mark.parametrize("kind", ["300 MiB file", "/dev/zero"])
def test_an_oversize_subject_token_file_is_refused_by_name_under_a_4_gib_address_space(emulator, tmp_path, kind):
    token_file = sparse(tmp_path / "oidc-token", 300 << 20) if kind == "300 MiB file" else "/dev/zero"
    credentials = tmp_path / "external.json"
    credentials.write_text(json.dumps({
        "type": "external_account", "audience": AUDIENCE, "subject_token_type": "urn:ietf:params:oauth:token-type:jwt",
        "token_url": f"{emulator.base}/v1/token", "credential_source": {"file": token_file}}))
    result, _ = plan(tmp_path, {"FCM_ENDPOINT": emulator.base, "GOOGLE_APPLICATION_CREDENTIALS": str(credentials)}, FOUR_GIB)
    assert result.returncode == 1, (result.returncode, result.stderr)
    assert f"the subject token file {token_file} named by credential_source.file" in result.stderr, result.stderr
    size = "is 314572800 bytes, over" if kind == "300 MiB file" else "is over"
    assert f"{size} the 1048576 bytes (1 MiB) fcmctl reads" in result.stderr, result.stderr
    assert [entry for entry in requests(emulator) if entry.get("endpoint") == "sts.token"] == []


def test_an_oversize_subject_token_is_refused_before_the_exchange(emulator, tmp_path):
    token_file = tmp_path / "oidc-token"
    token_file.write_text("s" * (300 << 10))
    credentials = tmp_path / "external.json"
    credentials.write_text(json.dumps({
        "type": "external_account", "audience": AUDIENCE, "subject_token_type": "urn:ietf:params:oauth:token-type:jwt",
        "token_url": f"{emulator.base}/v1/token", "credential_source": {"file": str(token_file)}}))
    result, _ = plan(tmp_path, {"FCM_ENDPOINT": emulator.base, "GOOGLE_APPLICATION_CREDENTIALS": str(credentials)})
    assert result.returncode == 1
    assert "holds a subject token of 307200 bytes, over the 262144 bytes (256 KiB) fcmctl sends" in result.stderr, result.stderr
    assert "ssssssss" not in result.stderr
    assert [entry for entry in requests(emulator) if entry.get("endpoint") == "sts.token"] == []


def external_account(tmp_path, emulator, token_url, impersonation_url=None):
    document = {
        "type": "external_account", "audience": AUDIENCE, "subject_token_type": "urn:ietf:params:oauth:token-type:jwt",
        "token_url": token_url,
        "credential_source": {"url": f"{emulator.base}/emulator/v1/oidc-token?audience=x", "headers": {"Authorization": "Bearer runner-token"},
                              "format": {"type": "json", "subject_token_field_name": "value"}},
    }
    if impersonation_url:
        document["service_account_impersonation_url"] = impersonation_url
    path = tmp_path / "external.json"
    path.write_text(json.dumps(document))
    return str(path)


ACCOUNT = "fcm-deployer@p.iam.gserviceaccount.com"


@pytest.mark.parametrize("field,token_url,impersonation_url,host", [
    ("token_url", "http://sts.example.com/v1/token", None, "sts.example.com"),
    ("token_url", "https://sts.googleapis.com.example.com/v1/token", None, "sts.googleapis.com.example.com"),
    ("service_account_impersonation_url", "EMULATOR/v1/token",
     f"https://iamcredentials.example.com/v1/projects/-/serviceAccounts/{ACCOUNT}:generateAccessToken", "iamcredentials.example.com"),
])
def test_a_token_url_off_googles_hosts_is_refused_and_nothing_is_sent(emulator, tmp_path, field, token_url, impersonation_url, host):
    proxy = RecordingProxy()
    try:
        path = external_account(tmp_path, emulator, token_url.replace("EMULATOR", emulator.base), impersonation_url)
        result, seconds = plan(tmp_path, {"FCM_ENDPOINT": emulator.base, "GOOGLE_APPLICATION_CREDENTIALS": path, **proxy.environment()})
        assert result.returncode == 1, result.stdout + result.stderr
        assert f"{path}: {field} names the host {host}, which is not" in result.stderr, result.stderr
        assert f"FCMCTL_ALLOW_TOKEN_HOSTS={host}" in result.stderr
        assert seconds < 30
        assert proxy.lines == [], "nothing left for a non-loopback host"
        assert requests(emulator) == [], "not even the subject token was fetched"
    finally:
        proxy.stop()


def test_plain_http_to_googles_token_service_is_refused(emulator, tmp_path):
    proxy = RecordingProxy()
    try:
        path = external_account(tmp_path, emulator, "http://sts.googleapis.com/v1/token")
        result, _ = plan(tmp_path, {"FCM_ENDPOINT": emulator.base, "GOOGLE_APPLICATION_CREDENTIALS": path, **proxy.environment()})
        assert result.returncode == 1
        assert "token_url names http://sts.googleapis.com, not HTTPS" in result.stderr, result.stderr
        assert proxy.lines == []
    finally:
        proxy.stop()


def test_an_impersonated_service_account_file_off_iam_credentials_is_refused(emulator, tmp_path):
    proxy = RecordingProxy()
    try:
        path = tmp_path / "impersonated.json"
        path.write_text(json.dumps({
            "type": "impersonated_service_account",
            "service_account_impersonation_url": f"https://attacker.example/v1/projects/-/serviceAccounts/{ACCOUNT}:generateAccessToken",
            "source_credentials": {"type": "authorized_user", "client_id": "c", "client_secret": "s", "refresh_token": "r",
                                   "token_uri": f"{emulator.base}/token"}}))
        result, _ = plan(tmp_path, {"FCM_ENDPOINT": emulator.base, "GOOGLE_APPLICATION_CREDENTIALS": str(path), **proxy.environment()})
        assert result.returncode == 1
        assert "service_account_impersonation_url names the host attacker.example" in result.stderr, result.stderr
        assert proxy.lines == [] and requests(emulator) == []
    finally:
        proxy.stop()


def test_an_allowed_host_is_sent_to_which_shows_the_proxy_would_see_a_send(emulator, tmp_path):
    """The control for the tests above: the same file with the host allowed does go out (through the proxy)."""
    proxy = RecordingProxy()
    try:
        path = external_account(tmp_path, emulator, "https://sts.example.com/v1/token")
        result, _ = plan(tmp_path, {"FCM_ENDPOINT": emulator.base, "GOOGLE_APPLICATION_CREDENTIALS": path,
                                    "FCMCTL_ALLOW_TOKEN_HOSTS": "sts.example.com", **proxy.environment()})
        assert result.returncode == 1, "the proxy answers nothing"
        assert any(line.startswith("CONNECT sts.example.com:443") for line in proxy.lines), proxy.lines
    finally:
        proxy.stop()


def test_the_emulator_on_loopback_still_signs_in(emulator, tmp_path):
    path = external_account(tmp_path, emulator, f"{emulator.base}/v1/token",
                            f"{emulator.base}/v1/projects/-/serviceAccounts/{ACCOUNT}:generateAccessToken")
    result, _ = plan(tmp_path, {"FCM_ENDPOINT": emulator.base, "GOOGLE_APPLICATION_CREDENTIALS": path})
    assert result.returncode in (0, 2), result.stdout + result.stderr
    endpoints = [entry["endpoint"] for entry in requests(emulator)]
    assert "sts.token" in endpoints and "iam.generateAccessToken" in endpoints, endpoints


def test_the_subject_token_url_is_sent_only_the_files_own_headers(emulator, tmp_path):
    """credential_source.url is the identity provider's (GitHub's): it gets the file's headers, never a Google token."""
    seen = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_GET(self):
            seen.append(dict(self.headers))
            body = json.dumps({"value": SUBJECT}).encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        path = tmp_path / "external.json"
        path.write_text(json.dumps({
            "type": "external_account", "audience": AUDIENCE, "subject_token_type": "urn:ietf:params:oauth:token-type:jwt",
            "token_url": f"{emulator.base}/v1/token",
            "credential_source": {"url": f"http://127.0.0.1:{server.server_address[1]}/token", "headers": {"X-Runner": "r1"},
                                  "format": {"type": "json", "subject_token_field_name": "value"}}}))
        result, _ = plan(tmp_path, {"FCM_ENDPOINT": emulator.base, "GOOGLE_APPLICATION_CREDENTIALS": str(path)})
        assert result.returncode in (0, 2), result.stdout + result.stderr
        assert seen, "the subject token URL was asked"
        for headers in seen:
            assert headers.get("X-Runner") == "r1"
            assert "Authorization" not in headers, headers
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize("kind", ["service_account", "authorized_user", "impersonated_source"])
def test_a_token_uri_off_googles_oauth_endpoint_is_refused_and_nothing_is_sent(emulator, tmp_path, kind):
    """A key's token_uri receives a signed assertion, an authorized_user's its refresh token and client secret."""
    proxy = RecordingProxy()
    try:
        evil = "https://tokens.example.com/token"
        path = tmp_path / "creds.json"
        user = {"type": "authorized_user", "client_id": "c", "client_secret": "s", "refresh_token": "r", "token_uri": evil}
        if kind == "service_account":
            service_account_key(path, evil)
        elif kind == "authorized_user":
            path.write_text(json.dumps(user))
        else:
            path.write_text(json.dumps({
                "type": "impersonated_service_account",
                "service_account_impersonation_url": f"https://iamcredentials.googleapis.com/v1/projects/-/serviceAccounts/{ACCOUNT}:generateAccessToken",
                "source_credentials": user}))
        result, _ = plan(tmp_path, {"FCM_ENDPOINT": emulator.base, "GOOGLE_APPLICATION_CREDENTIALS": str(path), **proxy.environment()})
        assert result.returncode == 1, result.stdout + result.stderr
        assert "token_uri names the host tokens.example.com, which is not Google's OAuth 2.0 token endpoint" in result.stderr, result.stderr
        assert proxy.lines == [] and requests(emulator) == []
    finally:
        proxy.stop()
