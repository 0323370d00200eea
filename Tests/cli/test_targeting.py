"""`--target ADDR` and `--exclude ADDR` on plan and apply: only the addressed objects, with a warning."""
import json

from fcmharness import Emulator, run

A, B = "tgt-a:APA91b" + "a" * 30, "tgt-b:APA91b" + "b" * 30
MANIFEST = f"""project: {{id: target-demo, senderId: "3"}}
devices:
  kiosk-a: {{token: "{A}"}}
groups:
  family:
    members: [kiosk-a]
topics:
  x:
    members: [kiosk-a, "{B}"]
  y:
    members: [kiosk-a]
"""


def test_target_and_exclude(tmp_path):
    emulator = Emulator()
    try:
        path = tmp_path / "fcmctl.yaml"
        path.write_text(MANIFEST)
        common = ["-f", str(path), "--state", str(tmp_path / "s.json")]
        plan = run(["plan", "--target", "topic/x", "--format", "json"] + common, emulator)
        assert plan.returncode == 0, plan.stderr
        document = json.loads(plan.stdout)
        assert [c["address"] for c in document["changes"]] == ["topic/x"]
        assert document["partial"] == {"targets": ["topic/x"], "excludes": []}
        assert "warning: this plan is partial (--target topic/x)" in plan.stderr

        applied = run(["apply", "--auto-approve", "--target", "topic/x"] + common, emulator)
        assert applied.returncode == 0, applied.stderr
        assert sorted(emulator_topics(emulator, A)) == ["x"] and emulator_topics(emulator, B) == ["x"]
        # Nothing else was touched: y and the group are still to do.
        rest = json.loads(run(["plan", "--format", "json"] + common, emulator).stdout)
        assert sorted(c["address"] for c in rest["changes"]) == ["group/family", "topic/y"]

        excluded = run(["apply", "--auto-approve", "--exclude", "topic/y"] + common, emulator)
        assert excluded.returncode == 0, excluded.stderr
        assert "--exclude topic/y" in excluded.stderr
        assert emulator_topics(emulator, A) == ["x"]  # y was skipped
        one = json.loads(run(["plan", "--format", "json", "--target", "topic/y/kiosk-a"] + common, emulator).stdout)
        assert [(c["address"], c["counts"]["add"]) for c in one["changes"]] == [("topic/y", 1)]
        by_token = run(["plan", "--format", "json", "--target", f"topic/x/{B}"] + common, emulator)
        assert json.loads(by_token.stdout)["changes"] == []  # applied already
        assert B not in by_token.stderr and B not in by_token.stdout  # the address is redacted like every output
        # A registration the topic does not have names nothing: a usage error, not an empty plan (issue 30).
        nothing = run(["plan", "--format", "json", "--target", f"topic/y/{B}"] + common, emulator)
        assert nothing.returncode == 64 and "names no device or registration of topic/y" in nothing.stderr
        assert B not in nothing.stderr and B not in nothing.stdout

        bad = run(["plan", "--target", "topics/y"] + common, emulator)
        assert bad.returncode == 64 and "is not an address" in bad.stderr
    finally:
        emulator.stop()


def emulator_topics(emulator, registration):
    for item in emulator.request("GET", "/emulator/v1/state")["registrations"]:
        if item["id"] == registration:
            return sorted(item["topics"])
    return []
