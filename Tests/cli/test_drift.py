"""`fcmctl drift --detailed-exitcode` on a real emulator: 0 after a clean apply, 2 for each kind of
out-of-band change, and never a mutating request or a state write."""
import json
import os

import pytest

from fcmharness import Emulator, run

PROJECT, SENDER = "drift-demo", "777"
A, B = "phone-a:APA91bAAAAAAAAAAAAAAAAAAAAAAAAAAA", "phone-b:APA91bBBBBBBBBBBBBBBBBBBBBBBBBBBB"
MANIFEST = f"""project: {{id: {PROJECT}, senderId: "{SENDER}"}}
groups:
  family:
    members: ["{A}", "{B}"]
topics:
  news:
    members: ["{A}", "{B}"]
  status:
    ownership: observe
    members: ["{A}"]
"""


def out_of_band_unsubscribe(emulator):
    emulator.unsubscribe(PROJECT, A, "news")


def uninstall(emulator):
    emulator.uninstall(B)


def group_deleted(emulator):
    emulator.delete_group(SENDER, "family", [A, B])


def observe_topic_differs(emulator):
    emulator.unsubscribe(PROJECT, A, "status")


@pytest.mark.parametrize(
    "change,category",
    [
        (out_of_band_unsubscribe, "managed_removed"),
        (uninstall, "dead_registrations"),
        (group_deleted, "groups_changed"),
        (observe_topic_differs, "observe_differs"),
    ],
)
def test_each_kind_of_drift_exits_2_and_a_clean_apply_exits_0(tmp_path, change, category):
    emulator = Emulator()
    try:
        emulator.register(A, B)
        emulator.subscribe(PROJECT, A, "status")  # the observe-only topic matches the manifest to begin with
        path = tmp_path / "fcmctl.yaml"
        path.write_text(MANIFEST)
        state = tmp_path / "state.json"
        common = ["-f", str(path), "--state", str(state)]
        assert run(["apply", "--auto-approve"] + common, emulator).returncode == 0

        clean = run(["drift", "--detailed-exitcode"] + common, emulator)
        assert clean.returncode == 0, clean.stdout + clean.stderr
        assert "No drift" in clean.stdout

        change(emulator)
        before_state = state.read_bytes()
        mutations_before = emulator.stats()
        drifted = run(["drift", "--detailed-exitcode", "--format", "json"] + common, emulator)
        assert drifted.returncode == 2, drifted.stderr
        found = {c["id"]: c["count"] for c in json.loads(drifted.stdout)["categories"] if c["count"]}
        assert category in found, found
        # Refresh only: no state write, no lock left behind, no mutating request.
        assert state.read_bytes() == before_state
        assert not os.path.exists(str(state) + ".lock")
        after = emulator.stats()
        assert after.get("subscriptions") == mutations_before.get("subscriptions")
        assert after.get("groups") == mutations_before.get("groups")

        text = run(["drift"] + common, emulator)
        assert text.returncode == 0  # without --detailed-exitcode, drift is not a failure
        assert category in text.stdout and "→" in text.stdout
    finally:
        emulator.stop()
