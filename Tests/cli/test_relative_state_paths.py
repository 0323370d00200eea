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
