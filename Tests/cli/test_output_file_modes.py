"""Files fcmctl writes keep their modes under any umask: an import (every registration in full) is 0600,
redacted documents 0644, and a failed import leaves no file behind that would claim records or block the retry."""
import os
import stat
import subprocess

from fcmharness import FCMCTL, ROOT, Emulator

QUICKSTART = os.path.join(ROOT, "examples/quickstart")
DEVICE = "mode-0:APA91b" + "m" * 30


def fcmctl(args, emulator, cwd):
    environment = {**os.environ, "FCM_EMULATOR_HOST": emulator.host}
    return subprocess.run([FCMCTL, *args], cwd=cwd, capture_output=True, text=True, env=environment, timeout=120,
                          preexec_fn=lambda: os.umask(0))


def mode(path):
    return stat.S_IMODE(os.stat(path).st_mode)


def test_modes_under_umask_zero(tmp_path):
    emulator = Emulator()
    try:
        state = str(tmp_path / "state.json")
        plan = fcmctl(["plan", "-f", QUICKSTART, "--state", state, "--json-into", "plan.json", "--events", "events.jsonl"], emulator, tmp_path)
        assert plan.returncode == 0, plan.stderr
        assert mode(tmp_path / "plan.json") == 0o644
        assert mode(tmp_path / "events.jsonl") == 0o644
        shown = fcmctl(["plan", "-f", QUICKSTART, "--state", state, "--show-tokens", "--json-into", "full.json"], emulator, tmp_path)
        assert shown.returncode == 0, shown.stderr
        assert mode(tmp_path / "full.json") == 0o600, "a document with full registrations is private"

        emulator.register(DEVICE)
        emulator.subscribe("mode-demo", DEVICE, "news")
        (tmp_path / "fcm").mkdir()
        (tmp_path / "fcm" / "project.yaml").write_text(f'project: {{id: mode-demo, senderId: "9"}}\ndevices:\n  kiosk: {{token: "{DEVICE}"}}\n')
        imported = fcmctl(["import", "subscriptions", "-f", "fcm", "-o", "fcm/topics.yaml", "--state", "s/state.json"], emulator, tmp_path)
        assert imported.returncode == 0, imported.stderr
        assert mode(tmp_path / "fcm" / "topics.yaml") == 0o600
    finally:
        emulator.stop()


def test_an_import_that_cannot_record_leaves_no_file(tmp_path):
    emulator = Emulator()
    try:
        emulator.register(DEVICE)
        emulator.subscribe("mode-demo", DEVICE, "news")
        (tmp_path / "fcm").mkdir()
        (tmp_path / "fcm" / "project.yaml").write_text(f'project: {{id: mode-demo, senderId: "9"}}\ndevices:\n  kiosk: {{token: "{DEVICE}"}}\n')
        # The state's directory cannot be created: a file stands where it should be.
        (tmp_path / "blocked").write_text("not a directory")
        failed = fcmctl(["import", "subscriptions", "-f", "fcm", "-o", "fcm/topics.yaml", "--state", "blocked/state.json"], emulator, tmp_path)
        assert failed.returncode != 0
        assert not (tmp_path / "fcm" / "topics.yaml").exists(), "no YAML claims records the state does not hold"
        retried = fcmctl(["import", "subscriptions", "-f", "fcm", "-o", "fcm/topics.yaml", "--state", "ok/state.json"], emulator, tmp_path)
        assert retried.returncode == 0, retried.stderr
        assert (tmp_path / "fcm" / "topics.yaml").exists()
    finally:
        emulator.stop()
