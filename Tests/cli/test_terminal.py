"""Terminal manners, in a real terminal (tmux): the progress line and colours appear there, and not in a
pipe, with NO_COLOR, or with --no-progress; `--events -` is valid JSON Lines."""
import json
import os
import shlex
import subprocess
import time
import uuid

import pytest

from fcmharness import FCMCTL, Emulator, run

PROJECT = "terminal-demo"


def manifest(count, ownership="additive"):
    members = "".join(f'      - "tty-{i:04d}:APA91b{"t" * 30}"\n' for i in range(count))
    return f'project: {{id: {PROJECT}, senderId: "99"}}\ntopics:\n  news:\n    ownership: {ownership}\n    members:\n{members}'


def wait_for(path, seconds=120):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if os.path.exists(path) and os.path.getsize(path) > 0:
            return True
        time.sleep(0.05)
    return False


def in_tmux(tmp_path, args, env):
    """Runs fcmctl in a detached tmux pane and returns every byte it wrote to the terminal, and its exit code."""
    socket = f"fcmctl-test-{uuid.uuid4().hex[:8]}"
    raw = tmp_path / "pane.raw"
    done = tmp_path / "exit.code"
    assignments = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
    command = f"env -u NO_COLOR {assignments} {shlex.quote(FCMCTL)} {' '.join(map(shlex.quote, args))}; echo $? > {done}"
    tmux = ["tmux", "-L", socket, "-f", "/dev/null"]
    subprocess.run(tmux + ["new-session", "-d", "-x", "200", "-y", "50", f"sh -c 'while [ ! -e {tmp_path}/go ]; do sleep 0.02; done; {command}; sleep 30'"], check=True)
    try:
        subprocess.run(tmux + ["pipe-pane", "-o", f"cat >> {raw}"], check=True)
        (tmp_path / "go").touch()
        assert wait_for(str(done)), "fcmctl did not finish in the terminal"
        # The pane's output reaches the pipe asynchronously: wait until the last line fcmctl prints is in.
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and b"State:" not in raw.read_bytes():
            time.sleep(0.05)
        return raw.read_bytes().decode(errors="replace"), int(done.read_text())
    finally:
        subprocess.run(tmux + ["kill-server"], capture_output=True)


@pytest.fixture
def slow_emulator():
    emulator = Emulator()
    # 20 ms per request and 4 in flight: 300 changes take about 1.5 s, long enough to see updates.
    emulator.request("PUT", "/emulator/v1/faults", {"latency_ms": 20})
    yield emulator
    emulator.stop()


def test_progress_and_colour_on_a_terminal_only(tmp_path, slow_emulator):
    path = tmp_path / "fcmctl.yaml"
    # Authoritative: apply then reads every registration first, so both phases show (an additive topic's new
    # registrations are created without a read).
    path.write_text(manifest(300, ownership="authoritative"))
    args = ["apply", "--auto-approve", "-f", str(path), "--state", str(tmp_path / "s.json"), "--parallelism", "4"]
    env = {"FCM_EMULATOR_HOST": slow_emulator.host}
    started = time.monotonic()
    output, code = in_tmux(tmp_path, args, env)
    elapsed = time.monotonic() - started
    assert code == 0, output
    assert "\x1b[33m~ topic/news\x1b[0m" in output  # colour on a terminal
    assert "Refreshing: 0/300" in output and "Applying: 300/300" in output
    assert "ETA" in output
    updates = output.count("\rApplying: ") + output.count("\r\x1b[KApplying: ")
    # At most 10 updates a second (plus the first and last).
    assert 2 <= updates <= 10 * elapsed + 2, (updates, elapsed)
    assert output.count("\r\x1b[K") >= 2  # the line is cleared at the end of each phase

    # In a pipe: neither progress nor colour.
    piped = run(args, slow_emulator)
    assert piped.returncode == 0
    assert "\x1b[" not in piped.stdout + piped.stderr
    assert "Applying:" not in piped.stderr


def test_no_color_and_no_progress_in_a_terminal(tmp_path, slow_emulator):
    path = tmp_path / "fcmctl.yaml"
    path.write_text(manifest(20))
    args = ["apply", "--auto-approve", "-f", str(path), "--state", str(tmp_path / "s.json"), "--no-progress"]
    output, code = in_tmux(tmp_path, args, {"FCM_EMULATOR_HOST": slow_emulator.host, "NO_COLOR": "1"})
    assert code == 0, output
    assert "~ topic/news" in output
    assert "\x1b[3" not in output  # no colour with NO_COLOR
    assert "Applying:" not in output and "Refreshing:" not in output  # no progress with --no-progress


def test_events_are_json_lines(tmp_path, slow_emulator):
    path = tmp_path / "fcmctl.yaml"
    path.write_text(manifest(50))
    result = run(["apply", "--auto-approve", "-f", str(path), "--state", str(tmp_path / "s.json"), "--events", "-"], slow_emulator)
    assert result.returncode == 0, result.stderr
    events = [json.loads(line) for line in result.stdout.splitlines()]  # every stdout line is one JSON object
    kinds = [event["event"] for event in events]
    assert kinds[0] == "start" and kinds[-1] == "finish" and events[-1]["exit_code"] == 0
    assert "phase" in kinds and "progress" in kinds
    assert {"event": "object", "address": "topic/news", "status": "done", "operations": 50}.items() <= next(
        e for e in events if e["event"] == "object").items()
    assert "Apply complete" in result.stderr  # the usual output moved to stderr

    to_file = tmp_path / "events.jsonl"
    again = run(["plan", "-f", str(path), "--state", str(tmp_path / "s.json"), "--events", str(to_file)], slow_emulator)
    assert again.returncode == 0 and "No changes" in again.stdout
    lines = [json.loads(line) for line in to_file.read_text().splitlines()]
    assert lines[0]["event"] == "start" and lines[-1] == {**lines[-1], "event": "finish", "exit_code": 0}
