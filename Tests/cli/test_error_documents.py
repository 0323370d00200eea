"""A plan, apply or drift that fails before its report still prints a document in the format asked for:
JSON of kind "error" (schemas/error.schema.json), Markdown under the comment marker with
`<!-- fcmctl:error -->`, a GitHub annotation and step summary; stderr and the exit code are unchanged."""
import json

from fcmharness import Emulator, run, schema_validator

A, B = "err-a:APA91b" + "a" * 30, "err-b:APA91b" + "b" * 30
GOOD = f'project: {{id: error-demo, senderId: "9"}}\ntopics:\n  news: ["{A}"]\n'
BROKEN = f'project: {{id: error-demo, senderId: "9"}}\ntopics:\n  "bad topic": ["{A}"]\n'


def error_document(result, code=1):
    assert result.returncode == code, result.stderr
    document = json.loads(result.stdout)
    errors = list(schema_validator("error.schema.json").iter_errors(document))
    assert not errors, errors[:3]
    assert document["exit_code"] == code
    return document


def test_a_manifest_error_in_every_format(tmp_path):
    path = tmp_path / "fcmctl.yaml"
    path.write_text(BROKEN)
    common = ["-f", str(path), "--state", str(tmp_path / "s.json")]
    for command in ("plan", "drift", "apply"):
        document = error_document(run([command, "--format", "json"] + common))
        assert document["command"] == command and document["project"] is None
        assert document["message"].startswith("the manifest has 1 error")
        diagnostic = document["diagnostics"][0]
        assert diagnostic["severity"] == "error" and diagnostic["file"] == str(path) and diagnostic["line"] == 3
        assert "error: the manifest has 1 error" in run([command, "--format", "json"] + common).stderr  # stderr as before

    markdown = run(["plan", "--format", "markdown"] + common)
    assert markdown.returncode == 1
    assert markdown.stdout.startswith("<!-- fcmctl:plan -->\n<!-- fcmctl:error -->\n### fcmctl plan failed\n")
    assert "**Exit code 1:** the manifest has 1 error" in markdown.stdout
    assert f"`{path}:3:3` **error**:" in markdown.stdout
    assert run(["drift", "--format", "markdown"] + common).stdout.startswith("<!-- fcmctl:drift -->\n<!-- fcmctl:error -->\n")

    # Text keeps stdout for results; --json-into gets the error document whatever the format.
    into = tmp_path / "plan.json"
    text = run(["plan", "--json-into", str(into)] + common)
    assert text.returncode == 1 and text.stdout == ""
    assert json.loads(into.read_text())["kind"] == "error"


def test_github_format_annotates_and_summarises_a_failure(tmp_path):
    emulator = Emulator()
    try:
        path = tmp_path / "fcmctl.yaml"
        path.write_text(GOOD)
        summary = tmp_path / "summary.md"
        summary.write_text("")
        # No --auto-approve and no terminal: apply refuses before sending anything.
        result = run(["apply", "--format", "github", "-f", str(path), "--state", str(tmp_path / "s.json")], emulator,
                     env={"GITHUB_STEP_SUMMARY": str(summary)})
        assert result.returncode == 1
        assert "::error::apply needs confirmation" in result.stdout
        text = summary.read_text()
        assert text.startswith("<!-- fcmctl:plan -->\n<!-- fcmctl:error -->\n### fcmctl apply failed · project `error-demo`")
    finally:
        emulator.stop()


def test_a_failure_after_the_manifest_loaded_names_the_project(tmp_path):
    emulator = Emulator()
    try:
        path = tmp_path / "fcmctl.yaml"
        path.write_text(GOOD)
        common = ["-f", str(path), "--state", str(tmp_path / "s.json")]
        refused = error_document(run(["apply", "--format", "json"] + common, emulator))
        assert refused["project"] == "error-demo" and refused["command"] == "apply"
        assert refused["message"] == "apply needs confirmation: standard input is not a terminal, so pass --auto-approve"

        # A rail: the plan removes more than --max-removals allows. It is refused after it was computed, so the
        # comment is the plan itself under the refusal (issue 30), not an error document that hides it.
        assert run(["apply", "--auto-approve"] + common, emulator).returncode == 0
        path.write_text(GOOD.replace(A, B))
        railed = run(["plan", "--max-removals", "0", "--format", "markdown"] + common, emulator)
        assert railed.returncode == 1, railed.stderr
        assert railed.stdout.startswith("<!-- fcmctl:plan -->\n### fcmctl plan · project `error-demo`\n\n> [!CAUTION]\n> **This plan is refused")
        assert "<!-- fcmctl:error -->" not in railed.stdout
        assert "more than --max-removals 0" in railed.stdout and "no longer listed among the members" in railed.stdout
    finally:
        emulator.stop()


def test_a_successful_run_prints_no_error_document(tmp_path):
    emulator = Emulator()
    try:
        path = tmp_path / "fcmctl.yaml"
        path.write_text(GOOD)
        plan = run(["plan", "--detailed-exitcode", "--format", "json", "-f", str(path), "--state", str(tmp_path / "s.json")], emulator)
        assert plan.returncode == 2  # changes present: the plan document, not an error
        assert json.loads(plan.stdout)["kind"] == "plan"
    finally:
        emulator.stop()
