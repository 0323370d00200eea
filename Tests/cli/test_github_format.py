"""`--format github`: annotations with file, line and column (at most 10, the most severe first, then a
count), and the Markdown summary appended to $GITHUB_STEP_SUMMARY."""
import re

from fcmharness import Emulator, run

A = "obs-a:APA91b" + "a" * 30


def test_plan_annotates_and_writes_the_step_summary(tmp_path):
    emulator = Emulator()
    try:
        path = tmp_path / "fcmctl.yaml"
        path.write_text(
            'project: {id: gh-demo, senderId: "5"}\n'
            "topics:\n"
            "  status:\n"
            "    ownership: observe\n"
            f'    members: ["{A}"]\n'
            "  news:\n"
            f'    members: ["{A}"]\n')
        summary = tmp_path / "summary.md"
        summary.write_text("earlier step\n")
        plan = run(
            ["plan", "--format", "github", "-f", str(path), "--state", str(tmp_path / "s.json")], emulator,
            env={"GITHUB_STEP_SUMMARY": str(summary)})
        assert plan.returncode == 0, plan.stderr
        annotation = next(line for line in plan.stdout.splitlines() if line.startswith("::warning"))
        assert re.match(rf"::warning file={re.escape(str(path))},line=3,col=3::topic/status is observe-only", annotation), annotation
        assert "Plan: 0 groups to create" in plan.stdout  # the log keeps the text plan
        text = summary.read_text()
        assert text.startswith("earlier step\n<!-- fcmctl:plan -->\n### fcmctl plan")  # appended, never replaced
        assert "| update | 1 | 1 | 0 |" in text
        assert A not in text and A not in plan.stdout
    finally:
        emulator.stop()


def test_validate_caps_annotations_most_severe_first(tmp_path):
    topics = "".join(f"  bad topic {i}:\n    members: [\"x{i}:APA91b{'z' * 30}\"]\n" for i in range(12))
    path = tmp_path / "fcmctl.yaml"
    path.write_text('project: {id: gh-demo, senderId: "5"}\ntopics:\n' + topics)
    summary = tmp_path / "summary.md"
    summary.touch()
    result = run(["validate", "--format", "github", str(path)], env={"GITHUB_STEP_SUMMARY": str(summary)})
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    annotations = [line for line in lines if line.startswith("::error file=")]
    assert len(annotations) == 10
    assert all(f"file={path}," in line and ",line=" in line and ",col=" in line for line in annotations)
    assert lines[10] == "::notice::2 more problems not shown; run fcmctl validate locally for all of them"
    assert "not valid" in summary.read_text()


def test_a_step_summary_that_cannot_be_written_is_a_warning_not_a_failure(tmp_path):
    emulator = Emulator()
    try:
        path = tmp_path / "fcmctl.yaml"
        path.write_text('project: {id: gh-demo, senderId: "5"}\ntopics:\n  news:\n' f'    members: ["{A}"]\n')
        missing = tmp_path / "no-such-dir" / "summary.md"
        plan = run(["plan", "--format", "github", "--detailed-exitcode", "-f", str(path), "--state", str(tmp_path / "s.json")], emulator,
                   env={"GITHUB_STEP_SUMMARY": str(missing)})
        assert plan.returncode == 2, plan.stderr  # the plan's own answer: changes, not an error
        assert f"warning: GITHUB_STEP_SUMMARY names {missing}, which does not exist or is not writable" in plan.stderr
        assert "Plan: 0 groups to create" in plan.stdout
        assert not missing.exists()
    finally:
        emulator.stop()
