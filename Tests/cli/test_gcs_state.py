"""The gcs state backend against a real fake-gcs-server (STORAGE_EMULATOR_HOST) and a real emulator."""
import json
import os
import signal
import subprocess

import pytest

from fcmharness import FCMCTL, ROOT, Emulator, FakeGCS, run, wait_until

PROJECT = "gcs-demo"
QUICKSTART = os.path.join(ROOT, "examples/quickstart")


def manifest(count, bucket="fcm", prefix="team/prod"):
    members = "".join(f'      - "gcs-{i:04d}:APA91b{"g" * 30}"\n' for i in range(count))
    return (f'project: {{id: {PROJECT}, senderId: "7"}}\nstate: {{backend: gcs, bucket: {bucket}, prefix: {prefix}}}\n'
            f"topics:\n  news:\n    members:\n{members}")


@pytest.fixture
def world(tmp_path):
    gcs = FakeGCS()
    gcs.create_bucket("fcm")
    emulator = Emulator()
    env = {"STORAGE_EMULATOR_HOST": gcs.host}
    yield gcs, emulator, env
    emulator.stop()
    gcs.stop()



def background(args, emulator, env):
    environment = {**os.environ, "FCM_EMULATOR_HOST": emulator.host, **env}
    environment.pop("NO_COLOR", None)
    return subprocess.Popen([FCMCTL, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=environment)


def test_apply_plan_pull_and_push_on_gcs(world, tmp_path):
    gcs, emulator, env = world
    path = tmp_path / "fcmctl.yaml"
    path.write_text(manifest(5))
    applied = run(["apply", "--auto-approve", "-f", str(path)], emulator, env)
    assert applied.returncode == 0, applied.stderr
    assert "State: gs://fcm/team/prod (serial 2)." in applied.stdout
    # The lock is released and the journal folded in: only the state remains.
    assert gcs.names("fcm") == ["team/prod/state.json", "team/prod/state.serial"]
    plan = run(["plan", "--detailed-exitcode", "-f", str(path)], emulator, env)
    assert plan.returncode == 0, plan.stdout + plan.stderr

    pulled = run(["state", "pull", "-f", str(path)], env=env)
    assert pulled.returncode == 0, pulled.stderr
    state = json.loads(pulled.stdout)
    assert state["serial"] == 2 and len(state["tokens"]) == 5
    state["serial"] = 3
    copy = tmp_path / "copy.json"
    copy.write_text(json.dumps(state))
    pushed = run(["state", "push", str(copy), "-f", str(path)], env=env)
    assert pushed.returncode == 0, pushed.stderr
    assert json.loads(gcs.get("fcm", "team/prod/state.json")[0])["serial"] == 3
    stale = run(["state", "push", str(copy), "-f", str(path)], env=env)
    assert stale.returncode == 1 and "not higher than the stored serial 3" in stale.stderr


def test_second_apply_exits_4_naming_the_holder(world, tmp_path):
    gcs, emulator, env = world
    emulator.request("PUT", "/emulator/v1/faults", {"latency_ms": 30})
    path = tmp_path / "fcmctl.yaml"
    path.write_text(manifest(200))
    first = background(["apply", "--auto-approve", "-f", str(path), "--parallelism", "4"], emulator, env)
    assert wait_until(lambda: "team/prod/state.lock" in gcs.names("fcm")), "the first apply never took the lock"
    second = run(["apply", "--auto-approve", "-f", str(path)], emulator, env)
    assert second.returncode == 4, second.stderr
    lock = json.loads(gcs.get("fcm", "team/prod/state.lock")[0])
    assert f"the state gs://fcm/team/prod is locked by {lock['who']} (pid {first.pid}), operation apply" in second.stderr
    assert f"fcmctl state unlock {lock['id']}" in second.stderr
    out, err = first.communicate(timeout=120)
    assert first.returncode == 0, err
    assert "team/prod/state.lock" not in gcs.names("fcm")


def test_a_killed_holders_lock_yields_to_lease_expiry_or_unlock(world, tmp_path):
    gcs, emulator, env = world
    emulator.request("PUT", "/emulator/v1/faults", {"latency_ms": 30})
    path = tmp_path / "fcmctl.yaml"
    path.write_text(manifest(200))
    victim = background(["apply", "--auto-approve", "-f", str(path), "--parallelism", "4"], emulator, env)
    # The run's header segment, then its first window of intents.
    assert wait_until(lambda: sum("/journal/" in n for n in gcs.names("fcm")) >= 2), "no segment of intents appeared"
    victim.send_signal(signal.SIGKILL)
    victim.wait()
    emulator.request("PUT", "/emulator/v1/faults", {})

    # As if the holder had been another runner: its lease still running, so the lock holds …
    lock = json.loads(gcs.get("fcm", "team/prod/state.lock")[0])
    lock["host"], lock["who"] = "runner-7", "ci@runner-7"
    lock["expires"] = "2099-01-01T00:00:00Z"
    gcs.put("fcm", "team/prod/state.lock", json.dumps(lock).encode())
    held = run(["apply", "--auto-approve", "-f", str(path)], emulator, env)
    assert held.returncode == 4 and "ci@runner-7" in held.stderr
    # … until `state unlock` removes it.
    unlocked = run(["state", "unlock", lock["id"], "-f", str(path)], env=env)
    assert unlocked.returncode == 0, unlocked.stderr

    # A lease that ran out is taken over, with a warning.
    lock["expires"] = "2020-01-01T00:00:00Z"
    gcs.put("fcm", "team/prod/state.lock", json.dumps(lock).encode())
    resumed = run(["apply", "--auto-approve", "-f", str(path)], emulator, env)
    assert resumed.returncode == 0, resumed.stderr
    assert "took over the state lock" in resumed.stderr and "its lease expired" in resumed.stderr
    assert "Recovered" in resumed.stderr  # the killed run's segments were folded in

    # Converged, with every subscription recorded as fcmctl's (none orphaned).
    assert run(["plan", "--detailed-exitcode", "-f", str(path)], emulator, env).returncode == 0
    listed = run(["state", "list", "topic/news", "-f", str(path), "--show-tokens"], env=env)
    assert listed.stdout.count("topic/news/gcs-") == 200, listed.stdout[:500]
    assert gcs.names("fcm") == ["team/prod/state.json", "team/prod/state.serial"]


def test_a_state_write_racing_another_writer_fails_clearly_and_loses_nothing(world, tmp_path):
    gcs, emulator, env = world
    emulator.request("PUT", "/emulator/v1/faults", {"latency_ms": 30})
    path = tmp_path / "fcmctl.yaml"
    path.write_text(manifest(100))
    racing = background(["apply", "--auto-approve", "-f", str(path), "--parallelism", "4"], emulator, env)
    assert wait_until(lambda: any("/journal/" in n for n in gcs.names("fcm")))
    # Another writer replaces the state under the running apply (same bytes, a new generation).
    stored, _ = gcs.get("fcm", "team/prod/state.json")
    rival = gcs.put("fcm", "team/prod/state.json", stored)
    out, err = racing.communicate(timeout=120)
    assert racing.returncode == 1, out + err
    assert "changed while this run worked" in err
    assert "Its journal is kept: every completed operation is in the journal segments gs://fcm/team/prod/journal/*" in err, err
    # The other writer's state stands, and the run's records wait in its segments.
    assert gcs.get("fcm", "team/prod/state.json")[1] == int(rival["generation"])
    assert any("/journal/" in n for n in gcs.names("fcm"))
    emulator.request("PUT", "/emulator/v1/faults", {})
    again = run(["apply", "--auto-approve", "-f", str(path)], emulator, env)
    assert again.returncode == 0, again.stderr
    listed = run(["state", "list", "topic/news", "-f", str(path), "--show-tokens"], env=env)
    assert listed.stdout.count("topic/news/gcs-") == 100
    assert run(["plan", "--detailed-exitcode", "-f", str(path)], emulator, env).returncode == 0


def test_migrate_the_quickstart_from_local_to_gcs(world, tmp_path):
    gcs, emulator, env = world
    local = str(tmp_path / "state.json")
    assert run(["apply", "--auto-approve", "-f", QUICKSTART, "--state", local], emulator, env).returncode == 0
    before = json.loads(open(local).read())
    migrated = run(["state", "migrate", "-f", QUICKSTART, "--state", local, "--to", "gs://fcm/quickstart"], env=env)
    assert migrated.returncode == 0, migrated.stderr
    stored = json.loads(gcs.get("fcm", "quickstart/state.json")[0])
    assert (stored["lineage"], stored["serial"]) == (before["lineage"], before["serial"])
    plan = run(["plan", "--detailed-exitcode", "-f", QUICKSTART, "--state", "gs://fcm/quickstart"], emulator, env)
    assert plan.returncode == 0, plan.stdout + plan.stderr
    assert "No changes" in plan.stdout

    again = run(["state", "migrate", "-f", QUICKSTART, "--state", local, "--to", "gs://fcm/quickstart"], env=env)
    assert again.returncode == 1 and "it was migrated already" in again.stderr
    other = str(tmp_path / "other.json")
    assert run(["apply", "--auto-approve", "-f", QUICKSTART, "--state", other], emulator, env).returncode == 0
    refused = run(["state", "migrate", "-f", QUICKSTART, "--state", other, "--to", "gs://fcm/quickstart"], env=env)
    assert refused.returncode == 1 and "refusing to overwrite it" in refused.stderr
    assert json.loads(gcs.get("fcm", "quickstart/state.json")[0])["lineage"] == before["lineage"]


def test_a_missing_bucket_is_a_clear_error(world, tmp_path):
    gcs, emulator, env = world
    path = tmp_path / "fcmctl.yaml"
    path.write_text(manifest(2, bucket="no-such-bucket"))
    result = run(["plan", "-f", str(path)], emulator, env)
    assert result.returncode == 1
    assert "gs://no-such-bucket/team/prod" in result.stderr and "storage.objects" in result.stderr


def test_an_older_generation_or_a_deleted_state_is_refused_before_any_request(world, tmp_path):
    gcs, emulator, env = world
    path = tmp_path / "fcmctl.yaml"
    path.write_text(manifest(3))
    assert run(["apply", "--auto-approve", "-f", str(path)], emulator, env).returncode == 0
    older, _ = gcs.get("fcm", "team/prod/state.json")  # serial 2
    path.write_text(manifest(6))
    assert run(["apply", "--auto-approve", "-f", str(path)], emulator, env).returncode == 0  # serial 4
    sent = len(emulator.request("GET", "/emulator/v1/requests")["requests"])

    gcs.put("fcm", "team/prod/state.json", older)  # an older generation put back
    rolled_back = run(["plan", "-f", str(path)], emulator, env)
    assert rolled_back.returncode == 1, rolled_back.stdout + rolled_back.stderr
    assert "an older generation was put back" in rolled_back.stderr

    gcs.delete("fcm", "team/prod/state.json")  # deleted
    for command in (["plan"], ["apply", "--auto-approve"]):
        deleted = run([*command, "-f", str(path)], emulator, env)
        assert deleted.returncode == 1, deleted.stdout + deleted.stderr
        assert "is missing, yet the store still has its serial record" in deleted.stderr
    assert len(emulator.request("GET", "/emulator/v1/requests")["requests"]) == sent, "nothing was sent"

    # The deliberate way back.
    restore = tmp_path / "restore.json"
    restore.write_bytes(older)
    pushed = run(["state", "push", "--force", str(restore), "-f", str(path)], env=env)
    assert pushed.returncode == 0, pushed.stderr
    assert run(["plan", "-f", str(path)], emulator, env).returncode == 0


@pytest.mark.parametrize("number", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_writes_the_state_and_removes_the_lock_object(world, tmp_path, number):
    """A cancelled CI job: the next runner must not wait out the lease, and nothing it did is lost."""
    gcs, emulator, env = world
    path = tmp_path / "fcmctl.yaml"
    path.write_text(manifest(2000))
    # 2,000 changes at 100 a second: 20 s, far longer than the signal takes to land.
    # stderr to a file and the plan to nowhere: 2,000 plan lines would fill a pipe nobody reads yet.
    errors = tmp_path / "stderr"
    environment = {**os.environ, "FCM_EMULATOR_HOST": emulator.host, **env}
    with open(errors, "w") as sink:
        victim = subprocess.Popen([FCMCTL, "apply", "--auto-approve", "-f", str(path), "--qps", "100"],
                                  stdout=subprocess.DEVNULL, stderr=sink, env=environment)
    assert wait_until(lambda: emulator.stats()["subscriptions"] >= 200), "the apply never got going"
    victim.send_signal(number)
    victim.wait(timeout=60)
    err = errors.read_text()
    assert victim.returncode == 128 + number, err
    assert f"interrupted by {signal.Signals(number).name}: " in err and "Run apply again to continue" in err
    # The lock object is gone and the journal segments folded into the state.
    assert gcs.names("fcm") == ["team/prod/state.json", "team/prod/state.serial"]
    pulled = run(["state", "pull", "-f", str(path)], env=env)
    state = json.loads(pulled.stdout)
    recorded = len(state["topics"].get("news", []))
    assert recorded == emulator.stats()["subscriptions"], err
    plan = run(["plan", "--detailed-exitcode", "-f", str(path)], emulator, env)
    assert plan.returncode == 2 and f"{2000 - recorded} subscriptions to add" in plan.stdout, plan.stdout
    again = run(["apply", "--auto-approve", "-f", str(path)], emulator, env)
    assert again.returncode == 0 and "took over" not in again.stderr, again.stderr
