"""A state's format version is never taken on its word (issue 32, point 6), on the built binary against a real
emulator, with local and gcs state. `"version": 4` edited to 2 once skipped the checksum: a topic's records
deleted from the state went unnoticed (apply exit 0), and emptying the manifest then left its 300
subscriptions in FCM as orphans. Every lowered version is now refused before anything is sent, naming the
state and the way out, and `state push --force` of the file a person checked puts the state back."""
import hashlib
import json
import re

import pytest

from fcmharness import Emulator, FakeGCS, run

PROJECT = "downgrade"


def token(topic, i):
    return f"{topic}-{i:04d}:APA91b{'d' * 30}"


def manifest(path, store, topics):
    state = "state: {backend: gcs, bucket: fcm, prefix: team/prod}\n" if store == "gcs" else ""
    body = "".join(f"  {topic}:\n    members:\n" + "".join(f'      - "{token(topic, i)}"\n' for i in range(count))
                   for topic, count in topics.items())
    path.write_text(f'project: {{id: {PROJECT}, senderId: "7"}}\n{state}topics:\n{body}' if topics else
                    f'project: {{id: {PROJECT}, senderId: "7"}}\n{state}topics: {{}}\n')


def subscribers(emulator, topic):
    registrations = emulator.request("GET", "/emulator/v1/state")["registrations"]
    return sum(topic in item.get("topics", []) for item in registrations)


def mutating_requests(emulator):
    return sum(entry["method"] in ("POST", "DELETE", "PATCH") for entry in emulator.request("GET", "/emulator/v1/requests")["requests"])


def lowered(text, edit):
    """The state as fcmctl wrote it (version 4), with its version lowered the ways a person or a tool might,
    and the reporter's damage on top: the records of topic `sports` deleted."""
    assert text.startswith('{\n"version": 4,\n'), text[:40]
    text = re.sub(r',\n  "sports": \[[0-9,]*\]', "", text)
    if edit == "removed":
        return text.replace('"version": 4,\n', "", 1)
    version, *rest = edit.split("+")
    text = text.replace('"version": 4,', f'"version": {version},', 1)
    if "no-project" in rest:
        text = re.sub(r',\n"project": \{[^\n]*\}', "", text)
    if "no-checksum" in rest or "recomputed" in rest:
        text = re.sub(r',\n"checksum": "sha256:[0-9a-f]*"', "", text)
    if "recomputed" in rest:
        body = text[:text.rindex("\n}")]
        text = body + f',\n"checksum": "sha256:{hashlib.sha256(body.encode()).hexdigest()}"\n}}\n'
    return text


# The last two look exactly like a state a version-2 or version-3 fcmctl wrote: only the serial record, which
# names the format the store last wrote, tells them apart.
EDITS = ["2", "3", "1", "removed", "2+no-checksum", "2+no-checksum+no-project", "3+no-project+recomputed"]


@pytest.fixture
def world(request, tmp_path):
    store = request.param
    emulator = Emulator()
    gcs = FakeGCS() if store == "gcs" else None
    env = {}
    if gcs:
        gcs.create_bucket("fcm")
        env["STORAGE_EMULATOR_HOST"] = gcs.host
    yield store, emulator, gcs, env
    emulator.stop()
    if gcs:
        gcs.stop()


class Store:
    def __init__(self, store, gcs, tmp_path):
        self.store, self.gcs = store, gcs
        self.path = tmp_path / ".fcmctl" / "state.json"
        self.args = [] if gcs else ["--state", str(self.path)]
        self.name = "gs://fcm/team/prod/state.json" if gcs else str(self.path)

    def read(self):
        return self.gcs.get("fcm", "team/prod/state.json")[0].decode() if self.gcs else self.path.read_text()

    def write(self, text):
        if self.gcs:
            self.gcs.put("fcm", "team/prod/state.json", text.encode())
        else:
            self.path.write_text(text)


@pytest.mark.parametrize("world", ["local", "gcs"], indirect=True)
@pytest.mark.parametrize("edit", EDITS)
def test_a_lowered_version_is_refused_before_anything_is_sent(world, tmp_path, edit):
    store, emulator, gcs, env = world
    state = Store(store, gcs, tmp_path)
    full, empty = tmp_path / "full.yaml", tmp_path / "empty.yaml"
    manifest(full, store, {"news": 20, "sports": 300})
    manifest(empty, store, {})
    applied = run(["apply", "--auto-approve", "-f", str(full), *state.args], emulator, env)
    assert applied.returncode == 0, applied.stderr
    original = state.read()
    state.write(lowered(original, edit))

    sent = mutating_requests(emulator)
    for command in (["plan", "-f", str(full)], ["apply", "--auto-approve", "--allow-empty", "-f", str(empty)]):
        refused = run([*command, *state.args], emulator, env)
        assert refused.returncode == 1, f"{command[0]}: {refused.stdout}{refused.stderr}"
        assert f"error: {state.name}" in refused.stderr or f"{state.name}:" in refused.stderr, refused.stderr
        assert "`fcmctl state push --force FILE`" in refused.stderr, refused.stderr
    assert mutating_requests(emulator) == sent, "nothing is sent on a refused state"
    assert subscribers(emulator, "sports") == 300

    # The way out: the file a person checked (here the state as it was), pushed deliberately.
    checked = tmp_path / "checked.json"
    checked.write_text(original)
    pushed = run(["state", "push", "--force", str(checked), "-f", str(full), *state.args], env=env)
    assert pushed.returncode == 0, pushed.stderr
    emptied = run(["apply", "--auto-approve", "--allow-empty", "-f", str(empty), *state.args], emulator, env)
    assert emptied.returncode == 0, emptied.stderr
    assert (subscribers(emulator, "news"), subscribers(emulator, "sports")) == (0, 0), "no orphan left"


@pytest.mark.parametrize("world", ["local", "gcs"], indirect=True)
def test_the_serial_record_names_the_format_and_a_genuine_old_state_still_upgrades(world, tmp_path):
    store, emulator, gcs, env = world
    state = Store(store, gcs, tmp_path)
    path = tmp_path / "fcmctl.yaml"
    manifest(path, store, {"news": 3})
    assert run(["apply", "--auto-approve", "-f", str(path), *state.args], emulator, env).returncode == 0
    record = json.loads(gcs.get("fcm", "team/prod/state.serial")[0] if gcs else (tmp_path / ".fcmctl/state.json.serial").read_text())
    assert record["format"] == 4 and record["serial"] == json.loads(state.read())["serial"]

    # As an fcmctl of format version 2 left a store: its state, and a serial record that names no format.
    written = json.loads(state.read())
    old = json.dumps({"version": 2, "lineage": written["lineage"], "serial": written["serial"], "tokens": written["tokens"],
                      "fids": [], "groups": {}, "topics": written["topics"]}, indent=0)
    state.write(old)
    old_record = json.dumps({"lineage": written["lineage"], "serial": written["serial"]}).encode()
    if gcs:
        gcs.put("fcm", "team/prod/state.serial", old_record)
    else:
        (tmp_path / ".fcmctl/state.json.serial").write_bytes(old_record)
    upgraded = run(["apply", "--auto-approve", "-f", str(path), *state.args], emulator, env)
    assert upgraded.returncode == 0, upgraded.stderr
    assert "state format version 2 will be upgraded to 4" in upgraded.stderr
    now = json.loads(state.read())
    assert now["version"] == 4 and now["serial"] == written["serial"] + 1 and now["project"]["id"] == PROJECT
    assert run(["plan", "--detailed-exitcode", "-f", str(path), *state.args], emulator, env).returncode == 0
