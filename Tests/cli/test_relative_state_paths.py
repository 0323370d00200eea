"""Relative and odd --state paths from a fresh working directory: a new CI runner's `--state
.fcmctl-ci/state.json` once died with SIGILL before printing anything."""
import os
import subprocess

import pytest

from fcmharness import FCMCTL, ROOT, Emulator

QUICKSTART = os.path.join(ROOT, "examples/quickstart")


@pytest.fixture
def emulator():
    instance = Emulator()
    yield instance
    instance.stop()


def fcmctl(args, cwd, emulator):
    environment = {**os.environ, "FCM_EMULATOR_HOST": emulator.host}
    return subprocess.run([FCMCTL, *args], cwd=cwd, capture_output=True, text=True, env=environment, timeout=120)


@pytest.mark.parametrize("state", ["b/state.json", ".fcmctl-ci/state.json", "a/b/c/state.json", "s.json", "./x/state.json", "d//state.json"])
def test_plan_and_apply_create_the_directory_of_a_relative_state(emulator, tmp_path, state):
    plan = fcmctl(["plan", "--detailed-exitcode", "-f", QUICKSTART, "--state", state], tmp_path, emulator)
    assert plan.returncode == 2, plan.stderr
    applied = fcmctl(["apply", "--auto-approve", "-f", QUICKSTART, "--state", state], tmp_path, emulator)
    assert applied.returncode == 0, applied.stderr
    assert (tmp_path / state).is_file()
    again = fcmctl(["plan", "--detailed-exitcode", "-f", QUICKSTART, "--state", state], tmp_path, emulator)
    assert again.returncode == 0, again.stdout + again.stderr


@pytest.mark.parametrize("state", ["b/", "."])
def test_a_directory_as_state_is_an_error_not_a_signal(emulator, tmp_path, state):
    (tmp_path / "b").mkdir()
    result = fcmctl(["plan", "-f", QUICKSTART, "--state", state], tmp_path, emulator)
    assert result.returncode in (1, 3), result
    assert result.returncode >= 0
    assert "error" in result.stderr


@pytest.mark.parametrize("kind", ["fifo", "device", "directory"])
def test_a_state_path_that_is_not_a_file_is_refused_and_nothing_is_left_beside_it(emulator, tmp_path, kind):
    if kind == "fifo":
        os.mkfifo(tmp_path / "state.json")
        state = "state.json"
    elif kind == "device":
        state = "/dev/zero"
    else:
        (tmp_path / "state.json").mkdir()
        state = "state.json"
    before = sorted(os.listdir(tmp_path))
    for command in (["plan"], ["apply", "--auto-approve"]):
        result = fcmctl([*command, "-f", QUICKSTART, "--state", state], tmp_path, emulator)
        assert result.returncode == 1, result
        assert "must name a regular file" in result.stderr
    assert sorted(os.listdir(tmp_path)) == before, "no .lock or journal created beside it"
    assert not os.path.exists("/dev/zero.lock")


def test_validate_and_plan_agree_on_the_project_id(emulator, tmp_path):
    (tmp_path / "fcmctl.yaml").write_text('topics:\n  news: ["np:APA91bxxxxxxxxxxxxxxxxxxxxxxxxxx"]\n')
    for command in (["validate", "-f", "fcmctl.yaml"], ["plan", "-f", "fcmctl.yaml", "--state", "s.json"]):
        result = fcmctl(command, tmp_path, emulator)
        assert result.returncode == 1, result
        assert "fcmctl.yaml:2:9: error: topics need a project id" in result.stderr
    environment = {**os.environ, "FCM_EMULATOR_HOST": emulator.host, "GOOGLE_CLOUD_PROJECT": "from-env"}
    for command in (["validate", "-f", "fcmctl.yaml"], ["plan", "--detailed-exitcode", "-f", "fcmctl.yaml", "--state", "s.json"]):
        result = subprocess.run([FCMCTL, *command], cwd=tmp_path, capture_output=True, text=True, env=environment, timeout=120)
        assert result.returncode in (0, 2), result


def test_lock_timeout_is_honoured_while_another_process_holds_the_directory_lock(emulator, tmp_path):
    import fcntl

    (tmp_path / "state").mkdir()
    holder = os.open(tmp_path / "state", os.O_RDONLY)
    fcntl.flock(holder, fcntl.LOCK_EX)
    try:
        # Were the timeout ignored, this would wait for the flock to go, which happens only after it returns:
        # the subprocess timeout would end the test.
        # apply: plan and drift take no lock.
        result = subprocess.run([FCMCTL, "apply", "--auto-approve", "-f", QUICKSTART, "--state", "state/state.json", "--lock-timeout", "1s"], cwd=tmp_path,
                                capture_output=True, text=True, timeout=30, env={**os.environ, "FCM_EMULATOR_HOST": emulator.host})
    finally:
        fcntl.flock(holder, fcntl.LOCK_UN)
        os.close(holder)
    assert result.returncode == 1, result
    assert "holds the state directory's lock (flock)" in result.stderr


def test_a_deleted_local_state_is_refused_not_started_afresh(emulator, tmp_path):
    assert fcmctl(["apply", "--auto-approve", "-f", QUICKSTART, "--state", "st/state.json"], tmp_path, emulator).returncode == 0
    saved = (tmp_path / "st" / "state.json").read_bytes()
    (tmp_path / "st" / "state.json").unlink()
    refused = fcmctl(["apply", "--auto-approve", "-f", QUICKSTART, "--state", "st/state.json"], tmp_path, emulator)
    assert refused.returncode == 1, refused
    assert "is missing, yet the store still has its serial record" in refused.stderr
    (tmp_path / "backup.json").write_bytes(saved)
    pushed = fcmctl(["state", "push", "--force", "backup.json", "--state", "st/state.json"], tmp_path, emulator)
    assert pushed.returncode == 0, pushed.stderr
    again = fcmctl(["plan", "--detailed-exitcode", "-f", QUICKSTART, "--state", "st/state.json"], tmp_path, emulator)
    assert again.returncode == 0, again.stdout + again.stderr
