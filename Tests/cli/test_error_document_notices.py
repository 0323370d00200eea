"""The error document is rendered from what the run said, as values: errors the engine said on its way (a
registration it could not read) and a failure with several problems (two unknown --target addresses) are in
it, each once, in the order stderr has them."""
import json

from fcmharness import Emulator, run

BROKEN, GOOD = "broken:APA91b" + "x" * 40, "good-a:APA91b" + "a" * 40
MANIFEST = f'project: {{id: p, senderId: "42"}}\ntopics:\n  news: ["{GOOD}", "{BROKEN}"]\n'


def errors_on_stderr(stderr):
    return [line[len("error: "):] for line in stderr.splitlines() if line.startswith("error: ")]


def test_an_unreadable_registration_said_by_the_engine_is_in_the_document(tmp_path):
    emulator = Emulator("--fail-registration", f"{BROKEN}=400")
    try:
        path = tmp_path / "fcmctl.yaml"
        path.write_text(MANIFEST)
        # No --auto-approve and no terminal: apply ends before its report, after the refresh said what it could not read.
        result = run(["apply", "--format", "json", "-f", str(path), "--state", str(tmp_path / "s.json")], emulator, stdin="")
        assert result.returncode == 1, result.stderr
        document = json.loads(result.stdout)
        assert document["kind"] == "error" and document["project"] == "p"
        assert document["message"] == "apply needs confirmation: standard input is not a terminal, so pass --auto-approve"
        assert document["errors"][0].startswith("could not read the subscriptions of broken…xxxx: FCM answered 400")
        assert document["errors"][1].startswith("1 registration could not be read;")
        assert document["errors"] == errors_on_stderr(result.stderr)
        assert BROKEN not in result.stdout and BROKEN not in result.stderr
    finally:
        emulator.stop()


def test_every_problem_of_one_failure_is_in_the_document(tmp_path):
    path = tmp_path / "fcmctl.yaml"
    path.write_text(MANIFEST)
    common = ["-f", str(path), "--state", str(tmp_path / "s.json"), "--target", "topic/nws", "--target", "group/x"]
    emulator = Emulator()
    try:
        for command in ("plan", "apply"):
            result = run([command, "--format", "json"] + common, emulator)
            assert result.returncode == 64, result.stderr
            document = json.loads(result.stdout)
            assert document["errors"] == errors_on_stderr(result.stderr), result.stderr
            assert len(document["errors"]) == 2 and document["errors"][0].startswith("--target topic/nws names no topic")
            assert document["message"].startswith("--target group/x names no group")
            assert document["message"].endswith("Nothing was read from FCM or sent")
    finally:
        emulator.stop()
