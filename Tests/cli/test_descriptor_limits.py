"""The open-file limit (`ulimit -n`): under any limit the real fcmctl exits 1 with a message that names the
limit and how to raise it, never a trap (SIGILL, exit 132 at `ulimit -n 10`) nor a state it "cannot read"
because its own connections took every descriptor; with enough for a few connections, plan and apply work."""
import os
import resource
import subprocess

import pytest

from fcmharness import FCMCTL, Emulator

REGISTRATIONS = [f"fd-{i}:APA91b" + "d" * 20 for i in range(400)]


def manifest():
    topics = "\n".join(f"  t{t}: [{', '.join(REGISTRATIONS[t * 100:(t + 1) * 100])}]" for t in range(4))
    return f'project: {{id: p, senderId: "1"}}\ntopics:\n{topics}\n'


def run_with_open_files(limit, args, env):
    def lower():
        resource.setrlimit(resource.RLIMIT_NOFILE, (limit, limit))

    return subprocess.run([FCMCTL, *args], capture_output=True, text=True, timeout=300, preexec_fn=lower,
                          env={"PATH": os.environ.get("PATH", "/usr/bin"), **env})


@pytest.fixture
def emulator():
    instance = Emulator()
    yield instance
    instance.stop()


@pytest.mark.parametrize("loop", ["epoll", "poll"])
@pytest.mark.parametrize("command", ["plan", "apply"])
@pytest.mark.parametrize("limit", [4, 10, 12, 16, 32, 35])
def test_too_few_descriptors_end_in_exit_1_saying_how_to_raise_the_limit(emulator, tmp_path, limit, command, loop):
    (tmp_path / "fcmctl.yaml").write_text(manifest())
    args = [command, "-f", str(tmp_path), "--state", str(tmp_path / "state.json")] + (["--auto-approve"] if command == "apply" else [])
    result = run_with_open_files(limit, args, {"FCM_EMULATOR_HOST": emulator.host, "HOME": str(tmp_path), "FCMCTL_CURL_LOOP": loop})
    assert result.returncode == 1, (result.returncode, result.stderr[-2000:])
    assert f"the open-file limit is {limit} (ulimit -n), too low for fcmctl" in result.stderr, result.stderr
    assert "raise it, e.g. `ulimit -n 1024`" in result.stderr
    assert emulator.request("GET", "/emulator/v1/requests")["requests"] == [], "nothing was sent"
    assert not (tmp_path / "state.json").exists()


@pytest.mark.parametrize("loop", ["epoll", "poll"])
@pytest.mark.parametrize("limit", [36, 64])
def test_a_few_descriptors_are_enough_to_apply(emulator, tmp_path, limit, loop):
    """Connections are held to what the limit leaves: 400 subscriptions at --parallelism 512 under 36 and 64."""
    (tmp_path / "fcmctl.yaml").write_text(manifest())
    env = {"FCM_EMULATOR_HOST": emulator.host, "HOME": str(tmp_path), "FCMCTL_CURL_LOOP": loop}
    state = ["--state", str(tmp_path / "state.json")]
    applied = run_with_open_files(limit, ["apply", "--auto-approve", "-f", str(tmp_path), *state], env)
    assert applied.returncode == 0, applied.stderr[-2000:]
    assert "400 operations done in 400 requests" in applied.stdout + applied.stderr, applied.stdout
    again = run_with_open_files(limit, ["plan", "--detailed-exitcode", "-f", str(tmp_path), *state], env)
    assert again.returncode == 0, again.stdout + again.stderr[-2000:]


@pytest.mark.parametrize("limit", [36, 64])
def test_a_few_descriptors_are_enough_with_the_state_in_gcs(emulator, tmp_path, limit):
    """The GCS store's own connections come out of the descriptors kept beside FCM's."""
    from fcmharness import FakeGCS

    gcs = FakeGCS()
    try:
        gcs.create_bucket("fcm")
        (tmp_path / "fcmctl.yaml").write_text(manifest())
        env = {"FCM_EMULATOR_HOST": emulator.host, "HOME": str(tmp_path), "STORAGE_EMULATOR_HOST": gcs.host}
        applied = run_with_open_files(limit, ["apply", "--auto-approve", "-f", str(tmp_path), "--state", "gs://fcm/fd"], env)
        assert applied.returncode == 0, applied.stderr[-2000:]
        assert "State: gs://fcm/fd (serial 2)." in applied.stdout, applied.stdout
        again = run_with_open_files(limit, ["plan", "--detailed-exitcode", "-f", str(tmp_path), "--state", "gs://fcm/fd"], env)
        assert again.returncode == 0, again.stdout + again.stderr[-2000:]
    finally:
        gcs.stop()
