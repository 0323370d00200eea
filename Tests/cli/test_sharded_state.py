"""The sharded state layout (issue 35, point 2) on the built binary, local and gcs: FCMCTL_STATE_SHARDS=4 cuts even
a small state into an index and four shards. An apply writes only the shards whose records changed; `state pull`
prints one whole document and `state push` takes it back; a missing shard stops a run before anything is sent,
naming the object."""
import json

import pytest

from fcmharness import Emulator, FakeGCS, run

PROJECT = "sharded"
SHARDED = {"FCMCTL_STATE_SHARDS": "4"}


def token(i):
    return f"dev-{i:04d}:APA91b{'s' * 30}"


def manifest(path, store, topics):
    state = "state: {backend: gcs, bucket: fcm, prefix: team/prod}\n" if store == "gcs" else ""
    body = "".join(f"  {topic}:\n    members:\n" + "".join(f'      - "{token(i)}"\n' for i in members)
                   for topic, members in topics.items())
    path.write_text(f'project: {{id: {PROJECT}, senderId: "7"}}\n{state}topics:\n{body}')


class Store:
    def __init__(self, store, gcs, tmp_path):
        self.gcs = gcs
        self.path = tmp_path / ".fcmctl" / "state.json"
        self.args = [] if gcs else ["--state", str(self.path)]
        self.name = "gs://fcm/team/prod/state.json" if gcs else str(self.path)

    def index(self):
        return json.loads(self.gcs.get("fcm", "team/prod/state.json")[0] if self.gcs else self.path.read_text())

    def shards(self):
        """Shard object names, relative to the state's folder, as the index names them."""
        if self.gcs:
            return sorted(name[len("team/prod/"):] for name in self.gcs.names("fcm", "team/prod/state.json.shards/"))
        folder = self.path.parent / "state.json.shards"
        return sorted(f"state.json.shards/{p.name}" for p in folder.iterdir()) if folder.exists() else []

    def delete_shard(self, relative):
        if self.gcs:
            self.gcs.delete("fcm", "team/prod/" + relative)
        else:
            (self.path.parent / relative).unlink()

    def shown(self, relative):
        return ("gs://fcm/team/prod/" if self.gcs else str(self.path.parent) + "/") + relative


@pytest.fixture(params=["local", "gcs"])
def world(request, tmp_path):
    emulator = Emulator()
    gcs = FakeGCS() if request.param == "gcs" else None
    env = dict(SHARDED)
    if gcs:
        gcs.create_bucket("fcm")
        env["STORAGE_EMULATOR_HOST"] = gcs.host
    yield request.param, emulator, Store(request.param, gcs, tmp_path), env
    emulator.stop()
    if gcs:
        gcs.stop()


def mutating_requests(emulator):
    return sum(entry["method"] in ("POST", "DELETE", "PATCH") for entry in emulator.request("GET", "/emulator/v1/requests")["requests"])


def test_an_apply_writes_only_the_shards_that_changed(world, tmp_path):
    store, emulator, state, env = world
    path = tmp_path / "fcmctl.yaml"
    manifest(path, store, {"news": range(40), "sports": range(0, 40, 3)})
    applied = run(["apply", "--auto-approve", "-f", str(path), *state.args], emulator, env)
    assert applied.returncode == 0, applied.stderr
    index = state.index()
    assert index["version"] == 5 and index["shard_count"] == 4 and index["project"]["id"] == PROJECT
    before = {entry["object"] for entry in index["shards"]}
    assert sorted(before) == state.shards()

    # One more device in one topic: its shard is replaced, the other three are the same objects.
    manifest(path, store, {"news": range(41), "sports": range(0, 40, 3)})
    applied = run(["apply", "--auto-approve", "-f", str(path), *state.args], emulator, env)
    assert applied.returncode == 0, applied.stderr
    after = {entry["object"] for entry in state.index()["shards"]}
    assert len(after - before) == 1 and len(before & after) == 3
    assert sorted(after) == state.shards(), "the replaced shard is removed"
    assert run(["plan", "--detailed-exitcode", "-f", str(path), *state.args], emulator, env).returncode == 0


def test_state_pull_prints_one_document_and_push_takes_it_back(world, tmp_path):
    store, emulator, state, env = world
    path = tmp_path / "fcmctl.yaml"
    manifest(path, store, {"news": range(12)})
    assert run(["apply", "--auto-approve", "-f", str(path), *state.args], emulator, env).returncode == 0
    pulled = run(["state", "pull", *state.args, "-f", str(path)], env=env)
    assert pulled.returncode == 0, pulled.stderr
    document = json.loads(pulled.stdout)
    assert document["version"] == 4 and "shards" not in document and len(document["tokens"]) == 12
    assert sorted(document["tokens"][i] for i in document["topics"]["news"]) == sorted(token(i) for i in range(12))

    # The index itself is not a document to push, and says where one comes from.
    index_file = tmp_path / "index.json"
    index_file.write_text(json.dumps(state.index()))
    refused = run(["state", "push", str(index_file), "-f", str(path), *state.args], env=env)
    assert refused.returncode == 1 and "the index of a sharded state" in refused.stderr and "state pull" in refused.stderr

    document["serial"] += 1
    del document["checksum"]
    edited = tmp_path / "pulled.json"
    edited.write_text(json.dumps(document))
    pushed = run(["state", "push", str(edited), "-f", str(path), *state.args], env=env)
    assert pushed.returncode == 0, pushed.stderr
    assert state.index()["version"] == 5 and state.index()["serial"] == document["serial"]
    again = json.loads(run(["state", "pull", *state.args, "-f", str(path)], env=env).stdout)
    assert {k: v for k, v in again.items() if k != "checksum"} == {k: v for k, v in document.items() if k != "checksum"}
    assert run(["plan", "--detailed-exitcode", "-f", str(path), *state.args], emulator, env).returncode == 0


def test_a_missing_shard_stops_the_run_before_anything_is_sent(world, tmp_path):
    store, emulator, state, env = world
    path = tmp_path / "fcmctl.yaml"
    manifest(path, store, {"news": range(30)})
    assert run(["apply", "--auto-approve", "-f", str(path), *state.args], emulator, env).returncode == 0
    victim = state.index()["shards"][1]["object"]
    state.delete_shard(victim)
    sent = mutating_requests(emulator)
    manifest(path, store, {"news": range(10)})
    for command in (["plan", "-f", str(path)], ["apply", "--auto-approve", "-f", str(path)]):
        refused = run([*command, *state.args], emulator, env)
        assert refused.returncode == 1, refused.stdout + refused.stderr
        assert f"{state.shown(victim)}: this shard of the state, named by its index {state.name}, is missing" in refused.stderr, refused.stderr
    assert mutating_requests(emulator) == sent, "nothing is sent on a state with a hole"
