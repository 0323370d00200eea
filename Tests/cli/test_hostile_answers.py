"""Strict reads: a front end between fcmctl and the emulator garbles answers the way a broken proxy or a
hostile network would. Whatever it does, no record is dropped (which would orphan a subscription for good)
and none is invented (which would claim a subscription that does not exist)."""
import http.server
import json
import os
import random
import threading
import urllib.error
import urllib.request

import pytest

from fcmharness import Emulator, run

PROJECT = "hostile"


class GarblingFrontEnd:
    """Forwards to the emulator; `garble(method, path, status, body)` may replace an answer, and `swallow`
    answers a request itself without forwarding it."""

    def __init__(self, upstream, garble, swallow=lambda method, path: None):
        front = self
        self.garbled = 0

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def relay(self):
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else None
                own = swallow(self.command, self.path)
                if own is not None:
                    front.garbled += 1
                    return self.answer(*own)
                headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "content-length")}
                request = urllib.request.Request(upstream + self.path, data=body, method=self.command, headers=headers)
                try:
                    with urllib.request.urlopen(request) as response:
                        status, data = response.status, response.read()
                except urllib.error.HTTPError as error:
                    status, data = error.code, error.read()
                replaced = garble(self.command, self.path, status, data)
                if replaced is not None:
                    front.garbled += 1
                    status, data = replaced
                self.answer(status, data)

            def answer(self, status, data):
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_PATCH = do_DELETE = relay

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self):
        self.server.shutdown()


def manifest(path, count, topic=True):
    members = "".join(f'      - "hostile-{i:04d}:APA91b{"h" * 30}"\n' for i in range(count))
    text = f'project: {{id: {PROJECT}, senderId: "7"}}\n'
    text += f"topics:\n  news:\n    members:\n{members}" if topic else "topics: {}\n"
    path.write_text(text)


def subscribed(emulator):
    state = emulator.request("GET", "/emulator/v1/state")
    return sorted(item["id"] for item in state["registrations"] if "news" in item.get("topics", []))


@pytest.fixture
def emulator():
    instance = Emulator()
    yield instance
    instance.stop()


WRONG_LISTS = [b'{"topicSubscriptions": "news"}', b'{"topicSubscriptions": null}', b'{"topicSubscriptions": {"topicName": "x"}}',
               b'{"topicSubscriptions": [7, 8]}', b'<html>502 Bad Gateway</html>']


def test_wrong_typed_list_answers_never_drop_a_record(emulator, tmp_path):
    path = tmp_path / "fcmctl.yaml"
    state = str(tmp_path / "state.json")
    manifest(path, 300)
    applied = run(["apply", "--auto-approve", "-f", str(path), "--state", state], emulator)
    assert applied.returncode == 0, applied.stderr
    assert len(subscribed(emulator)) == 300

    chance = random.Random(7)

    def garble(method, path, status, data):
        if method == "GET" and "/topicSubscriptions" in path and status == 200 and chance.random() < 0.3:
            return 200, chance.choice(WRONG_LISTS)
        return None

    front = GarblingFrontEnd(emulator.base, garble)
    manifest(path, 300, topic=False)
    env = {"FCM_ENDPOINT": front.base, "FCM_ACCESS_TOKEN": "owner", "HOME": str(tmp_path)}
    for _ in range(3):  # a pipeline retrying through the broken proxy
        hostile = run(["apply", "--auto-approve", "--allow-empty", "-f", str(path), "--state", state], env=env)
        assert hostile.returncode != 0 or front.garbled == 0, "a run that read garbage cannot succeed"
        assert "unreadable" in hostile.stderr or hostile.returncode == 0
    front.stop()
    assert front.garbled > 0

    # Whatever the broken runs did, every subscription left in FCM is still known: a clean run removes them all.
    clean = run(["apply", "--auto-approve", "--allow-empty", "-f", str(path), "--state", state], emulator)
    assert clean.returncode == 0, clean.stderr
    assert subscribed(emulator) == []


def test_garbage_answers_to_creates_never_invent_a_record(emulator, tmp_path):
    path = tmp_path / "fcmctl.yaml"
    state = str(tmp_path / "state.json")
    manifest(path, 40)

    def swallow(method, path):  # "200 OK" from something that is not FCM, and nothing done
        if method == "POST" and "/topicSubscriptions" in path:
            return 200, b"<html><body>OK</body></html>"
        return None

    front = GarblingFrontEnd(emulator.base, lambda *a: None, swallow)
    env = {"FCM_ENDPOINT": front.base, "FCM_ACCESS_TOKEN": "owner", "HOME": str(tmp_path)}
    hostile = run(["apply", "--auto-approve", "-f", str(path), "--state", state], env=env)
    front.stop()
    assert hostile.returncode == 3, hostile.stdout + hostile.stderr
    assert "40 of the failed may have happened" in hostile.stdout
    assert subscribed(emulator) == []

    # Nothing was recorded as done: the next plan reads FCM and still wants all 40.
    plan = run(["plan", "--format", "json", "-f", str(path), "--state", state], emulator)
    document = json.loads(plan.stdout)
    assert document["summary"]["subscriptions_to_add"] == 40, document["summary"]
    clean = run(["apply", "--auto-approve", "-f", str(path), "--state", state], emulator)
    assert clean.returncode == 0, clean.stderr
    assert len(subscribed(emulator)) == 40


GROUP_ANSWERS = [b"{}", b'{"notification_key": ""}', b'{"notification_key": 5}', b"5", b"garbage", b"<html><body>OK</body></html>"]
GROUP_MEMBERS = [f"grp-{i}:APA91b{'g' * 30}" for i in range(3)]


def group_manifest(path, members):
    groups = f"groups:\n  fam:\n    members: {json.dumps(members)}\n" if members else "groups: {}\n"
    path.write_text(f'project: {{id: {PROJECT}, senderId: "7"}}\n{groups}topics: {{}}\n')


def group_in_fcm(emulator):
    return next((sorted(g["members"]) for g in emulator.request("GET", "/emulator/v1/state")["groups"] if g["name"] == "fam"), None)


@pytest.mark.parametrize("body", GROUP_ANSWERS)
@pytest.mark.parametrize("change", ["create", "swap"])
def test_a_group_answer_without_a_key_is_an_unknown_outcome_settled_by_the_next_run(emulator, tmp_path, body, change):
    """FCM made the change, but the answer a broken proxy passes on says nothing of it: the step stays pending
    (never recorded as done), the next run reads the group by name and converges, and dropping the group then
    leaves no orphan in FCM."""
    path = tmp_path / "fcmctl.yaml"
    state = str(tmp_path / "state.json")
    a, b, c = GROUP_MEMBERS
    if change == "swap":
        group_manifest(path, [a, b])
        assert run(["apply", "--auto-approve", "-f", str(path), "--state", state], emulator).returncode == 0
    wanted = [a, b] if change == "create" else [a, c]
    group_manifest(path, wanted)

    def garble(method, path_, status, data):
        if method == "POST" and path_.startswith("/fcm/notification") and status == 200:
            return 200, body
        return None

    front = GarblingFrontEnd(emulator.base, garble)
    env = {"FCM_ENDPOINT": front.base, "FCM_ACCESS_TOKEN": "owner", "HOME": str(tmp_path)}
    hostile = run(["apply", "--auto-approve", "-f", str(path), "--state", state], env=env)
    front.stop()
    assert front.garbled > 0
    assert hostile.returncode == 3, hostile.stdout + hostile.stderr
    assert "answered without a notification_key" in hostile.stderr
    assert "Apply complete" not in hostile.stdout

    settled = run(["apply", "--auto-approve", "-f", str(path), "--state", state], emulator)
    assert settled.returncode == 0, settled.stdout + settled.stderr
    assert group_in_fcm(emulator) == sorted(wanted)
    again = run(["plan", "--detailed-exitcode", "-f", str(path), "--state", state], emulator)
    assert again.returncode == 0, again.stdout + again.stderr

    group_manifest(path, [])
    dropped = run(["apply", "--auto-approve", "--allow-empty", "-f", str(path), "--state", state], emulator)
    assert dropped.returncode == 0, dropped.stdout + dropped.stderr
    assert group_in_fcm(emulator) is None, "no orphan group"
