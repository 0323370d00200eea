"""Devices from a JSON Lines file beside the manifest, end to end: a token rotation is one edited line, and the
plan shows it as that device's rotation (its name on both sides and a note), in text and JSON; after the apply the
state keeps only the new registration's name."""
import json

from fcmharness import Emulator, run


def write_fleet(directory, k1_token):
    (directory / "fleet.jsonl").write_text(
        json.dumps({"name": "k1", "token": k1_token, "labels": {"site": "nyc"}}) + "\n"
        + json.dumps({"name": "k2", "fid": "cR1rjyj4_KcAPA91bGusQ2", "labels": {"site": "nyc"}}) + "\n")


def test_a_rotated_token_is_shown_as_the_named_devices_rotation(tmp_path):
    directory = tmp_path / "fcm"
    directory.mkdir()
    (directory / "fcmctl.yaml").write_text('project: {id: p, senderId: "1"}\ndeviceFiles: [fleet.jsonl]\n'
                                           "topics:\n  news:\n    members: {selector: {site: nyc}}\n")
    write_fleet(directory, "old-k1:APA91b" + "o" * 30)
    emulator = Emulator()
    try:
        common = ["-f", str(directory), "--state", str(tmp_path / "s.json")]
        first = run(["apply", "--auto-approve"] + common, emulator)
        assert first.returncode == 0, first.stdout + first.stderr
        assert "Devices: 2 (2 from fleet.jsonl)." in first.stderr
        write_fleet(directory, "new-k1:APA91b" + "n" * 30)
        plan = run(["plan", "--detailed-exitcode"] + common, emulator)
        assert plan.returncode == 2, plan.stderr
        assert "− k1 (old-k1" in plan.stdout and "+ k1 (new-k1" in plan.stdout, plan.stdout
        assert "note: device k1 rotated its registration (old-k1" in plan.stderr, plan.stderr
        assert "o" * 30 not in plan.stdout + plan.stderr, "registrations stay redacted"
        document = json.loads(run(["plan", "--format", "json"] + common, emulator).stdout)
        news = next(c for c in document["changes"] if c["address"] == "topic/news")
        assert news["added_devices"] == ["k1"] and news["removed_devices"] == ["k1"]
        assert any(n["message"].startswith("device k1 rotated its registration") for n in document["notes"])
        assert run(["apply", "--auto-approve"] + common, emulator).returncode == 0
        state = json.loads((tmp_path / "s.json").read_text())
        names = {state["tokens"][int(k)] if int(k) < len(state["tokens"]) else state["fids"][int(k) - len(state["tokens"])]: v
                 for k, v in state["device_names"].items()}
        assert names == {"new-k1:APA91b" + "n" * 30: "k1", "cR1rjyj4_KcAPA91bGusQ2": "k2"}
        again = run(["plan", "--detailed-exitcode"] + common, emulator)
        assert again.returncode == 0 and "rotated its registration" not in again.stderr
    finally:
        emulator.stop()


def test_a_bad_line_is_named_with_its_file_and_line_and_nothing_is_sent(tmp_path):
    directory = tmp_path / "fcm"
    directory.mkdir()
    (directory / "fcmctl.yaml").write_text('project: {id: p, senderId: "1"}\ndeviceFiles: [fleet.csv]\ntopics:\n  news: [k1]\n')
    (directory / "fleet.csv").write_text("name,token\nk1,a:APA91b\nk2\n")
    emulator = Emulator()
    try:
        result = run(["plan", "-f", str(directory), "--state", str(tmp_path / "s.json")], emulator)
        assert result.returncode == 1
        assert f"{directory}/fleet.csv:3:1: error: 1 fields where the header has 2" in result.stderr, result.stderr
        assert emulator.request("GET", "/emulator/v1/requests")["requests"] == []
    finally:
        emulator.stop()
