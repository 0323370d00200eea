"""Fencing: a lock holder paused past its lease (SIGSTOP: a frozen VM, a debugger) is taken over by another
runner, which applies another manifest. When the first one resumes it must send nothing more, or it would
undo the second runner's removals and leave subscriptions no state records. Local state and GCS."""
import json
import os
import signal
import subprocess

import pytest

from fcmharness import FCMCTL, Emulator, FakeGCS, run, wait_until

PROJECT = "fence"
LEASE = "3"


def manifest(path, count, store):
    members = "".join(f'      - "fence-{i:04d}:APA91b{"f" * 30}"\n' for i in range(count))
    state = "state: {backend: gcs, bucket: fcm, prefix: fence}\n" if store == "gcs" else ""
    path.write_text(f'project: {{id: {PROJECT}, senderId: "7"}}\n{state}topics:\n  news:\n    members:\n{members}')


def news_subscribers(emulator):
    registrations = emulator.request("GET", "/emulator/v1/state")["registrations"]
    return sorted(item["id"] for item in registrations if "news" in item.get("topics", []))


def mutating_requests(emulator):
    log = emulator.request("GET", "/emulator/v1/requests")["requests"]
    return [entry for entry in log if entry["method"] in ("POST", "DELETE", "PATCH")]



@pytest.mark.parametrize("store,trial", [("local", 1), ("local", 2), ("local", 3), ("gcs", 1), ("gcs", 2), ("gcs", 3)])
def test_a_holder_paused_past_its_lease_sends_nothing_after_the_takeover(tmp_path, store, trial):
    emulator = Emulator()
    gcs = FakeGCS() if store == "gcs" else None
    try:
        env = {"FCMCTL_LOCK_LEASE": LEASE, "FCM_EMULATOR_HOST": emulator.host}
        if gcs:
            gcs.create_bucket("fcm")
            env["STORAGE_EMULATOR_HOST"] = gcs.host
        state_args = [] if gcs else ["--state", str(tmp_path / "state.json")]
        first_manifest, second_manifest = tmp_path / "first.yaml", tmp_path / "second.yaml"
        manifest(first_manifest, 2000, store)
        manifest(second_manifest, 100, store)

        holder = subprocess.Popen([FCMCTL, "apply", "--auto-approve", "-f", str(first_manifest), "--qps", "150", "--parallelism", "8",
                                   *state_args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={**os.environ, **env})
        # Pause it mid-run, at a different point each trial.
        assert wait_until(lambda: len(news_subscribers(emulator)) >= 150 * trial), "the first apply never got going"
        holder.send_signal(signal.SIGSTOP)

        # The second runner waits for the lease to run out, takes the lock over and applies its manifest.
        second = run(["apply", "--auto-approve", "-f", str(second_manifest), "--lock-timeout", "30s", *state_args], env=env)
        assert second.returncode == 0, second.stderr
        assert "took over the state lock" in second.stderr
        assert news_subscribers(emulator) == sorted(f"fence-{i:04d}:APA91b{'f' * 30}" for i in range(100))
        before = len(mutating_requests(emulator))

        holder.send_signal(signal.SIGCONT)
        out, err = holder.communicate(timeout=120)
        assert holder.returncode != 0, out + err
        late = mutating_requests(emulator)[before:]
        assert late == [], f"the old holder sent {len(late)} requests after the takeover"
        assert "lock" in err, err

        # Nothing lost: FCM holds exactly what the second manifest declares, and its state knows it.
        assert news_subscribers(emulator) == sorted(f"fence-{i:04d}:APA91b{'f' * 30}" for i in range(100))
        plan = run(["plan", "--detailed-exitcode", "-f", str(second_manifest), *state_args], env=env)
        assert plan.returncode == 0, plan.stdout + plan.stderr
    finally:
        emulator.stop()
        if gcs:
            gcs.stop()
