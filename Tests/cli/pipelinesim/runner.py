"""Runs GitHub Actions workflows from their YAML, on this machine, the way GitHub's runner does as far as the
example workflows need it (examples/github-actions/README.md lists what is modelled and what is not).

- Events: pull_request (opened, synchronize; `branches` and `paths` filters, the test merge commit
  refs/pull/N/merge as GITHUB_SHA), push (`branches`, `paths`), schedule, workflow_dispatch (inputs).
- Jobs: `needs`, job `if:` (success()/failure()/always()/cancelled() over the needed jobs), `strategy.matrix`
  (values, `include`, expressions such as fromJSON(needs.X.outputs.Y) or fromJSON(vars.X)), job `outputs` (with
  a matrix, the last leg to finish wins, as on GitHub), `environment` (deployment branches: a leg whose run's
  branch, the head branch for a pull request, matches none fails before it starts, with GitHub's message;
  required reviewers: the leg waits until the test approves; environment variables override repository
  ones), `concurrency` at job level (one running and at most one pending leg per group: a newer pending leg
  cancels the older pending one; `cancel-in-progress: true` cancels the running one), `permissions` (the
  job's token carries them; the API stand-in enforces them; id-token: write gives
  ACTIONS_ID_TOKEN_REQUEST_URL/TOKEN, for which the GitHub stand-in issues an OIDC token carrying the job's
  claims: sub, repository, ref, event_name, environment…).
- Steps: `run:` written to a file and run as GitHub does (`bash -e FILE` by default, `bash --noprofile --norc
  -eo pipefail FILE` for `shell: bash`), with GITHUB_ENV, GITHUB_OUTPUT, GITHUB_PATH and GITHUB_STEP_SUMMARY
  files read back after each step; `env`, `if`, `id`, `working-directory`, `continue-on-error`; `::error`
  and `::warning` commands become annotations. `uses:` steps run local stand-ins: actions/checkout,
  google-github-actions/auth, actions/upload-artifact, actions/download-artifact (by major version, or by a
  commit SHA that RELEASES names) and the setup action fcmctl/fcmctl (the built fcmctl put on PATH). Any other
  action or commit, expression or key the simulator does not model raises Unsupported.

Jobs run one at a time (a leg runs to its end before the next starts); "at the same time" is modelled by
delivering several events before running anything, so concurrency groups see them queued together."""
import fnmatch
import glob
import itertools
import json
import os
import re
import shutil
import subprocess

import yaml

from .expressions import Unsupported, condition, interpolate, to_string, truthy
from .github import GitHub

HERE = os.path.dirname(os.path.abspath(__file__))
STANDINS = os.path.join(HERE, "bin")
SYSTEM_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
KNOWN_JOB_KEYS = {"name", "runs-on", "needs", "if", "strategy", "environment", "concurrency", "permissions", "env", "steps",
                  "outputs", "timeout-minutes", "defaults"}
# The releases of the actions the example workflows pin by commit SHA (`git ls-remote --tags` of each
# repository; the workflows carry the tag in a comment). A commit not listed here is refused, not guessed.
RELEASES = {
    ("actions/checkout", "3d3c42e5aac5ba805825da76410c181273ba90b1"): "v7.0.1",
    ("google-github-actions/auth", "7c6bc770dae815cd3e89ee6cdf493a5fab2cc093"): "v3.0.0",
    ("actions/upload-artifact", "bbbca2ddaa5d8feaa63e36b76fdaad77386f024f"): "v7.0.0",
    ("actions/download-artifact", "3e5f45b2cfb9172054b4087a40e8e0b5a5461e7c"): "v8.0.1",
}
# The major versions each stand-in models: the inputs the workflows use and what the action does with them are
# the same across these (the later majors moved to Node 24 and added inputs; auth v3 dropped its deprecated
# retry inputs; download-artifact v5 changed downloads by artifact id, which the workflows do not use).
MODELLED_MAJORS = {
    "actions/checkout": {"v4", "v5", "v6", "v7"},
    "google-github-actions/auth": {"v2", "v3"},
    "actions/upload-artifact": {"v4", "v5", "v6", "v7"},
    "actions/download-artifact": {"v4", "v5", "v6", "v7", "v8"},
}
KNOWN_STEP_KEYS = {"name", "id", "if", "run", "uses", "with", "env", "shell", "working-directory", "continue-on-error",
                   "timeout-minutes"}


def git(*args, cwd=None, check=True):
    result = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True,
                            env=dict(os.environ, GIT_AUTHOR_NAME="sim", GIT_AUTHOR_EMAIL="sim@example.com",
                                     GIT_COMMITTER_NAME="sim", GIT_COMMITTER_EMAIL="sim@example.com"))
    if check and result.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)}: {result.stderr}")
    return result.stdout.strip()


def path_filter(patterns, files):
    """GitHub's filter patterns: `*` within a path segment, `**` across them, a leading `!` excludes."""
    def regex(pattern):
        out = ""
        for token in re.split(r"(\*\*/?|\*|\?)", pattern):
            out += {"**/": "(?:.*/)?", "**": ".*", "*": "[^/]*", "?": "[^/]"}.get(token, re.escape(token))
        return re.compile(out + r"\Z")
    matched = False
    for file in files:
        keep = False
        for pattern in patterns:
            if pattern.startswith("!"):
                if regex(pattern[1:]).match(file):
                    keep = False
            elif regex(pattern).match(file):
                keep = True
        matched = matched or keep
    return matched


class Repo:
    """The repository: a bare git repository standing for github.com/OWNER/NAME, and a clone to author in."""

    def __init__(self, root):
        self.origin = os.path.join(root, "origin.git")
        self.work = os.path.join(root, "author")
        git("init", "--bare", "-b", "main", self.origin)
        git("clone", self.origin, self.work)
        git("checkout", "-b", "main", cwd=self.work)

    def write(self, files):
        for path, content in files.items():
            full = os.path.join(self.work, path)
            if content is None:
                os.remove(full)
            else:
                os.makedirs(os.path.dirname(full), exist_ok=True)
                with open(full, "w") as handle:
                    handle.write(content)

    def commit_to(self, branch, files, message, start="main"):
        """Commits FILES on BRANCH (created from START if new) and pushes it; the new sha."""
        git("fetch", "origin", cwd=self.work)
        exists = git("ls-remote", "--heads", "origin", branch, cwd=self.work)
        git("checkout", "-B", branch, f"origin/{branch}" if exists else f"origin/{start}", cwd=self.work)
        self.write(files)
        git("add", "-A", cwd=self.work)
        git("commit", "-m", message, cwd=self.work)
        git("push", "origin", f"HEAD:refs/heads/{branch}", cwd=self.work)
        return git("rev-parse", "HEAD", cwd=self.work)

    def initial(self, files):
        self.write(files)
        git("add", "-A", cwd=self.work)
        git("commit", "-m", "initial", cwd=self.work)
        git("push", "origin", "HEAD:refs/heads/main", cwd=self.work)
        return git("rev-parse", "HEAD", cwd=self.work)

    def head(self, ref="main"):
        return git("--git-dir", self.origin, "rev-parse", f"refs/heads/{ref}")

    def merge(self, branch, message):
        """A merge commit of BRANCH into main, pushed (GitHub's "Create a merge commit")."""
        git("fetch", "origin", cwd=self.work)
        git("checkout", "-B", "main", "origin/main", cwd=self.work)
        git("merge", "--no-ff", "-m", message, f"origin/{branch}", cwd=self.work)
        git("push", "origin", "HEAD:refs/heads/main", cwd=self.work)
        return git("rev-parse", "HEAD", cwd=self.work)

    def test_merge(self, number, branch):
        """refs/pull/N/merge: the branch merged into main as it is now, as GitHub computes for a pull request."""
        git("fetch", "origin", cwd=self.work)
        git("checkout", "--detach", "origin/main", cwd=self.work)
        git("merge", "--no-ff", "-m", f"Merge {branch} into main", f"origin/{branch}", cwd=self.work)
        git("push", "-f", "origin", f"HEAD:refs/pull/{number}/merge", cwd=self.work)
        sha = git("rev-parse", "HEAD", cwd=self.work)
        git("checkout", "-B", "main", "origin/main", cwd=self.work)
        return sha

    def changed(self, base, head):
        return git("--git-dir", self.origin, "diff", "--name-only", f"{base}...{head}").splitlines()


class Leg:
    """One job, or one matrix combination of it."""

    ids = itertools.count(50000)

    def __init__(self, run, job_id, spec, matrix, strategy):
        self.run, self.job_id, self.spec, self.matrix, self.strategy = run, job_id, spec, matrix, strategy
        self.id = next(Leg.ids)
        self.state = "new"  # new, approval, pending, running, done
        self.result = None  # success, failure, cancelled
        self.outputs, self.annotations, self.log, self.summary = {}, [], [], ""
        self.steps = {}
        self.environment = None
        self.group = None
        self.cancel_in_progress = False
        self.requests = []  # emulator request log entries made during the leg
        self.storage = []  # the storage proxy's decisions during the leg
        self.identity = []  # the workload identity stand-in's decisions during the leg
        self.api = {"id": self.id, "run_id": run.id, "name": job_id, "status": "queued", "conclusion": None}

    def __repr__(self):
        return f"<{self.run.workflow_file}#{self.run.id} {self.api['name']} {self.state}/{self.result}>"


class Run:
    ids = itertools.count(9000)

    def __init__(self, sim, workflow_file, document, event_name, event, sha, ref):
        self.id = next(Run.ids)
        self.sim, self.workflow_file, self.document = sim, workflow_file, document
        self.event_name, self.event, self.sha, self.ref = event_name, event, sha, ref
        self.jobs = {}  # job id -> {"legs": [...], "result": None|..., "outputs": {}}
        self.artifacts = {}
        head_branch = ref.split("/", 2)[-1] if ref.startswith("refs/heads/") else event.get("pull_request", {}).get("head", {}).get("ref")
        self.api = {"id": self.id, "name": document.get("name", workflow_file), "path": f".github/workflows/{workflow_file}",
                    "event": event_name, "head_sha": event.get("pull_request", {}).get("head", {}).get("sha", sha),
                    "head_branch": head_branch, "status": "queued", "conclusion": None, "run_attempt": 1,
                    "jobs": [], "artifacts": self.artifacts}

    def finished(self):
        return all(job["result"] is not None for job in self.jobs.values()) and len(self.jobs) == len(self.document["jobs"])

    def __repr__(self):
        return f"<run {self.workflow_file}#{self.id} {self.event_name} {self.sha[:7]}>"


class Simulator:
    def __init__(self, root, workflows_dir, repository, fcmctl, endpoints, variables, environments=None, request_log=None,
                 storage=None, identity=None, oidc_key=None):
        """endpoints: {"fcm": URL of fcm-emulator, "storage": URL of the Cloud Storage JSON API (fake-gcs-server, or
        the StorageProxy in front of it), "sts" and "iamcredentials": URLs of the token services (default: fcm;
        the WorkloadIdentity stand-in in front of the emulator's)}. A job's OIDC token comes from the GitHub stand-in.
        environments: {name: {"reviewers": bool, "branches": [patterns allowed to deploy], "vars": {…}}}.
        storage, identity: the StorageProxy and WorkloadIdentity stand-ins, whose logs each leg keeps.
        oidc_key: the key the GitHub stand-in signs OIDC tokens with (the WorkloadIdentity stand-in checks them)."""
        self.root = root
        self.repo = Repo(os.path.join(root, "git"))
        self.github = GitHub(repository, self.repo.origin, oidc_key).start()
        self.repository, self.fcmctl, self.endpoints = repository, fcmctl, endpoints
        self.vars, self.environments = dict(variables), dict(environments or {})
        self.request_log = request_log
        self.storage, self.identity = storage, identity
        self.workflows = {}
        for path in sorted(glob.glob(os.path.join(workflows_dir, "*.yml"))):
            with open(path) as handle:
                self.workflows[os.path.basename(path)] = yaml.safe_load(handle)
        self.runs, self.legs = [], []
        self.holders, self.pending = {}, {}  # concurrency group -> leg
        self.approved = set()
        # GitHub's runners keep one workspace path per repository: /home/runner/work/NAME/NAME.
        name = repository.split("/")[1]
        self.workspace = os.path.join(root, "runner", "work", name, name)
        self.runner_temp = os.path.join(root, "runner", "temp")
        self.tool_cache = os.path.join(root, "runner", "toolcache")

    def stop(self):
        self.github.stop()

    # --- events -------------------------------------------------------------------------------------------

    def triggers(self, document):
        on = document.get("on", document.get(True))
        if isinstance(on, str):
            on = {on: None}
        elif isinstance(on, list):
            on = {name: None for name in on}
        return on or {}

    def deliver(self, event_name, event, sha, ref, changed=None, types_action=None, only=None):
        started = []
        for file, document in self.workflows.items():
            if only and file != only:
                continue
            trigger = self.triggers(document)
            if event_name not in trigger:
                continue
            spec = trigger[event_name] or {}
            if event_name == "pull_request":
                types = spec.get("types", ["opened", "synchronize", "reopened"])
                if types_action not in types:
                    continue
                if "branches" in spec and not any(fnmatch.fnmatchcase(event["pull_request"]["base"]["ref"], b) for b in spec["branches"]):
                    continue
            if event_name == "push" and "branches" in spec and not any(fnmatch.fnmatchcase(ref.split("/", 2)[-1], b) for b in spec["branches"]):
                continue
            if "paths" in spec and changed is not None and not path_filter(spec["paths"], changed):
                continue
            run = Run(self, file, document, event_name, event, sha, ref)
            self.runs.append(run)
            self.github.runs.append(run.api)
            started.append(run)
        self.admit()
        return started

    def repository_event(self):
        return {"full_name": self.repository, "name": self.repository.split("/")[1], "owner": {"login": self.repository.split("/")[0]}}

    def pull_request_event(self, pull, action, only=None):
        merge_sha = self.repo.test_merge(pull["number"], pull["head"]["ref"])
        pull["base"]["sha"] = self.repo.head()
        event = {"action": action, "number": pull["number"], "pull_request": json.loads(json.dumps(pull)),
                 "repository": self.repository_event()}
        changed = self.repo.changed(pull["base"]["sha"], pull["head"]["sha"])
        return self.deliver("pull_request", event, merge_sha, f"refs/pull/{pull['number']}/merge", changed, action, only=only)

    def open_pull_request(self, branch, files, title, only=None):
        """ONLY: deliver the event to that workflow file alone (a test's own workflow)."""
        head = self.repo.commit_to(branch, files, title)
        pull = self.github.open_pull(title, branch, head, self.repo.head())
        runs = self.pull_request_event(pull, "opened", only)
        return pull, runs

    def push_to_pull_request(self, number, files, message, only=None):
        pull = self.github.pulls[number]
        pull["head"]["sha"] = self.repo.commit_to(pull["head"]["ref"], files, message)
        return self.pull_request_event(pull, "synchronize", only)

    def merge(self, number):
        pull = self.github.pulls[number]
        before = self.repo.head()
        sha = self.repo.merge(pull["head"]["ref"], f"Merge pull request #{number} from {pull['head']['ref']}")
        pull.update(state="closed", merged=True, merged_at="2026-01-01T00:00:00Z", merge_commit_sha=sha)
        self.github.issues[number]["state"] = "closed"
        event = {"ref": "refs/heads/main", "before": before, "after": sha, "head_commit": {"id": sha},
                 "repository": self.repository_event()}
        return self.deliver("push", event, sha, "refs/heads/main", self.repo.changed(before, sha))

    def schedule(self, workflow_file):
        sha = self.repo.head()
        cron = self.triggers(self.workflows[workflow_file])["schedule"][0]["cron"]
        return self.deliver("schedule", {"schedule": cron, "repository": self.repository_event()}, sha, "refs/heads/main",
                            only=workflow_file)

    def dispatch(self, workflow_file, inputs=None):
        sha = self.repo.head()
        event = {"inputs": inputs or {}, "ref": "refs/heads/main", "repository": self.repository_event()}
        return self.deliver("workflow_dispatch", event, sha, "refs/heads/main", only=workflow_file)

    def approve(self, environment):
        """A required reviewer approves every leg waiting for ENVIRONMENT (and later ones, until cleared)."""
        self.approved.add(environment)
        for leg in self.legs:
            if leg.state == "approval" and leg.environment == environment:
                leg.api["status"] = "queued"
                self.acquire(leg)
        self.admit()

    # --- scheduling ---------------------------------------------------------------------------------------

    def needs_of(self, spec):
        needs = spec.get("needs", [])
        return [needs] if isinstance(needs, str) else list(needs)

    def needs_context(self, run, spec):
        return {need: {"result": run.jobs[need]["result"], "outputs": run.jobs[need]["outputs"]} for need in self.needs_of(spec)}

    def base_context(self, run, environment_vars=None):
        github = {
            "event_name": run.event_name, "event": run.event, "sha": run.sha, "ref": run.ref,
            "ref_name": run.ref.split("/", 2)[-1], "repository": self.repository,
            "repository_owner": self.repository.split("/")[0], "run_id": str(run.id), "run_number": str(run.id),
            "run_attempt": "1", "workflow": run.document.get("name", run.workflow_file), "actor": "octocat",
            "server_url": "https://github.com", "api_url": self.github.api_url, "workspace": self.workspace,
            "head_ref": run.event.get("pull_request", {}).get("head", {}).get("ref", ""),
            "base_ref": run.event.get("pull_request", {}).get("base", {}).get("ref", ""),
        }
        return {"github": github, "vars": dict(self.vars, **(environment_vars or {})), "secrets": {},
                "inputs": run.event.get("inputs", {}), "runner": {"os": "Linux", "arch": "X64", "temp": self.runner_temp,
                                                                  "tool_cache": self.tool_cache}}

    def admit(self):
        changed = True
        while changed:
            changed = False
            for run in self.runs:
                for job_id, spec in run.document["jobs"].items():
                    if job_id in run.jobs:
                        continue
                    needs = self.needs_of(spec)
                    if any(need not in run.jobs or run.jobs[need]["result"] is None for need in needs):
                        continue
                    changed = True
                    self.expand(run, job_id, spec)
            for leg in list(self.legs):
                if leg.state == "new":
                    changed = True
                    self.queue(leg)
            for run in self.runs:
                if run.api["status"] != "completed" and run.finished():
                    results = [job["result"] for job in run.jobs.values()]
                    run.api["status"] = "completed"
                    run.api["conclusion"] = ("failure" if "failure" in results else "cancelled" if "cancelled" in results
                                             else "success")

    def expand(self, run, job_id, spec):
        unknown = set(spec) - KNOWN_JOB_KEYS
        if unknown:
            raise Unsupported(f"{run.workflow_file} job {job_id}: keys not modelled: {sorted(unknown)}")
        context = dict(self.base_context(run), needs=self.needs_context(run, spec))

        def status(name):
            results = [run.jobs[n]["result"] for n in self.needs_of(spec)]
            return {"always": True, "cancelled": False, "success": all(r == "success" for r in results),
                    "failure": any(r == "failure" for r in results)}[name]

        run.jobs[job_id] = {"legs": [], "result": None, "outputs": {}}
        if not condition(spec.get("if"), context, status):
            run.jobs[job_id]["result"] = "skipped"
            run.api["jobs"].append({"id": next(Leg.ids), "run_id": run.id, "name": job_id, "status": "completed", "conclusion": "skipped"})
            return
        strategy = spec.get("strategy", {})
        combinations = [{}]
        if "matrix" in strategy:
            matrix = interpolate(strategy["matrix"], context) if isinstance(strategy["matrix"], str) else strategy["matrix"]
            matrix = self.evaluate_tree(matrix, context)
            axes = {k: v for k, v in matrix.items() if k not in ("include", "exclude")}
            combinations = [dict(zip(axes, values)) for values in itertools.product(*axes.values())] if axes else []
            for exclude in matrix.get("exclude", []) or []:
                combinations = [c for c in combinations if not all(c.get(k) == v for k, v in exclude.items())]
            for include in matrix.get("include", []) or []:
                merged = False
                # Without axes, every include entry is its own combination.
                for combination in (combinations if axes else []):
                    if all(combination.get(k) == v for k, v in include.items() if k in axes):
                        combination.update({k: v for k, v in include.items() if k not in axes or k in combination})
                        merged = True
                if not merged:
                    combinations.append(dict(include))
            if not combinations:
                raise Unsupported(f"{run.workflow_file} job {job_id}: an empty matrix fails the run on GitHub")
        for combination in combinations:
            leg = Leg(run, job_id, spec, combination, strategy)
            leg_context = dict(context, matrix=combination, strategy={"fail-fast": strategy.get("fail-fast", True)})
            leg.api["name"] = to_string(interpolate(spec.get("name", job_id), leg_context)) if "name" in spec else (
                f"{job_id} ({', '.join(to_string(v) for v in combination.values())})" if combination else job_id)
            environment = spec.get("environment")
            if isinstance(environment, dict):
                environment = environment.get("name")
            leg.environment = to_string(interpolate(environment, leg_context)) if environment else None
            concurrency = spec.get("concurrency")
            if concurrency is not None:
                if isinstance(concurrency, str):
                    concurrency = {"group": concurrency}
                leg.group = to_string(interpolate(concurrency["group"], leg_context))
                leg.cancel_in_progress = truthy(interpolate(concurrency.get("cancel-in-progress", False), leg_context))
            run.jobs[job_id]["legs"].append(leg)
            run.api["jobs"].append(leg.api)
            self.legs.append(leg)

    def evaluate_tree(self, value, context):
        if isinstance(value, dict):
            return {k: self.evaluate_tree(v, context) for k, v in value.items()}
        if isinstance(value, list):
            return [self.evaluate_tree(v, context) for v in value]
        return interpolate(value, context)

    def queue(self, leg):
        if leg.environment and not self.may_deploy(leg):
            branch = leg.run.api["head_branch"]
            message = f'Branch "{branch}" is not allowed to deploy to {leg.environment} due to environment protection rules.'
            leg.annotations += [("error", message), ("error", "The deployment was rejected or didn't satisfy other protection rules.")]
            leg.log.append(f"--- (GitHub) {message}")
            self.finish(leg, "failure")
            return
        if leg.environment and self.environments.get(leg.environment, {}).get("reviewers") and leg.environment not in self.approved:
            leg.state = "approval"
            leg.api["status"] = "waiting"
            return
        self.acquire(leg)

    def may_deploy(self, leg):
        """An environment's deployment branch policy, checked against the run's branch (a pull request's head
        branch, as GitHub checks it for pull_request events)."""
        patterns = self.environments.get(leg.environment, {}).get("branches")
        if patterns is None:
            return True
        branch = leg.run.api["head_branch"] or ""
        return any(fnmatch.fnmatchcase(branch, pattern) for pattern in patterns)

    def claims(self, leg):
        """The claims of the OIDC token GitHub gives the job (docs.github.com, "OpenID Connect reference")."""
        run = leg.run
        subject = (f"repo:{self.repository}:environment:{leg.environment}" if leg.environment else
                   f"repo:{self.repository}:pull_request" if run.event_name in ("pull_request", "pull_request_target") else
                   f"repo:{self.repository}:ref:{run.ref}")
        claims = {
            "sub": subject, "repository": self.repository, "repository_owner": self.repository.split("/")[0],
            "ref": run.ref, "ref_type": "branch", "sha": run.sha, "event_name": run.event_name,
            "workflow": run.document.get("name", run.workflow_file), "run_id": str(run.id), "run_number": str(run.id),
            "run_attempt": "1", "actor": "octocat",
            "job_workflow_ref": f"{self.repository}/.github/workflows/{run.workflow_file}@{run.ref}",
            "head_ref": run.event.get("pull_request", {}).get("head", {}).get("ref", ""),
            "base_ref": run.event.get("pull_request", {}).get("base", {}).get("ref", ""),
        }
        if leg.environment:
            claims["environment"] = leg.environment
        return claims

    def acquire(self, leg):
        if leg.group is None:
            leg.state = "running"
            return
        holder = self.holders.get(leg.group)
        if holder is None:
            self.holders[leg.group] = leg
            leg.state = "running"
        elif leg.cancel_in_progress:
            self.finish(holder, "cancelled")
            self.holders[leg.group] = leg
            leg.state = "running"
        else:
            older = self.pending.get(leg.group)
            if older is not None:
                self.finish(older, "cancelled")
            self.pending[leg.group] = leg
            leg.state = "pending"
            leg.api["status"] = "pending"

    def finish(self, leg, result):
        leg.state, leg.result = "done", result
        leg.api.update(status="completed", conclusion=result)
        if leg.group and self.holders.get(leg.group) is leg:
            del self.holders[leg.group]
            waiting = self.pending.pop(leg.group, None)
            if waiting is not None:
                self.holders[leg.group] = waiting
                waiting.state = "running"
        if leg.group and self.pending.get(leg.group) is leg:
            del self.pending[leg.group]
        job = leg.run.jobs[leg.job_id]
        if result == "success" or leg.outputs:
            job["outputs"].update({k: v for k, v in leg.outputs.items() if v != ""})
        if all(l.state == "done" for l in job["legs"]):
            results = [l.result for l in job["legs"]]
            job["result"] = "failure" if "failure" in results else "cancelled" if "cancelled" in results else "success"
        elif result == "failure" and leg.strategy.get("fail-fast", True):
            for other in job["legs"]:
                if other.state in ("new", "approval", "pending", "running") and other is not leg:
                    self.finish(other, "cancelled")

    def run_until_idle(self, limit=200):
        """Runs every leg that can run, in order, until only legs waiting for approval (or nothing) remain."""
        for _ in range(limit):
            ready = [leg for leg in self.legs if leg.state == "running"]
            if not ready:
                return
            leg = ready[0]
            result = self.execute(leg)
            self.finish(leg, result)
            self.admit()
        raise RuntimeError("the simulation did not settle")

    def waiting_for_approval(self):
        return [leg for leg in self.legs if leg.state == "approval"]

    # --- a job ----------------------------------------------------------------------------------------------

    def execute(self, leg):
        run, spec = leg.run, leg.spec
        for folder in (self.workspace, self.runner_temp):
            shutil.rmtree(folder, ignore_errors=True)
            os.makedirs(folder)
        home = os.path.join(self.root, "runner", "home")
        shutil.rmtree(home, ignore_errors=True)
        os.makedirs(home)
        environment_vars = self.environments.get(leg.environment, {}).get("vars", {}) if leg.environment else {}
        permissions = spec.get("permissions", run.document.get("permissions"))
        if permissions is None or permissions == "write-all":
            permissions = {s: "write" for s in ("actions", "contents", "issues", "pull-requests", "id-token")}
        elif permissions == "read-all":
            permissions = {s: "read" for s in ("actions", "contents", "issues", "pull-requests")}
        token = self.github.issue_token(permissions)
        context = self.base_context(run, environment_vars)
        context["github"]["token"] = token
        context["github"]["job"] = leg.job_id
        context["secrets"] = {"GITHUB_TOKEN": token}
        context["matrix"] = leg.matrix
        context["strategy"] = {"fail-fast": leg.strategy.get("fail-fast", True)}
        context["needs"] = self.needs_context(run, spec)
        context["steps"] = leg.steps
        context["job"] = {"status": "success"}
        context["env"] = {}
        for level in (run.document.get("env", {}), spec.get("env", {})):
            for name, value in (level or {}).items():
                context["env"][name] = to_string(interpolate(value, context))
        event_path = os.path.join(self.runner_temp, "_github_event.json")
        with open(event_path, "w") as handle:
            json.dump(run.event, handle)
        base_env = {
            "HOME": home, "LANG": "C.UTF-8", "CI": "true", "GITHUB_ACTIONS": "true", "GITHUB_REPOSITORY": self.repository,
            "GITHUB_REPOSITORY_OWNER": self.repository.split("/")[0], "GITHUB_SHA": run.sha, "GITHUB_REF": run.ref,
            "GITHUB_REF_NAME": context["github"]["ref_name"], "GITHUB_EVENT_NAME": run.event_name, "GITHUB_EVENT_PATH": event_path,
            "GITHUB_WORKSPACE": self.workspace, "GITHUB_RUN_ID": str(run.id), "GITHUB_RUN_NUMBER": str(run.id),
            "GITHUB_RUN_ATTEMPT": "1", "GITHUB_JOB": leg.job_id, "GITHUB_WORKFLOW": context["github"]["workflow"],
            "GITHUB_ACTOR": "octocat", "GITHUB_SERVER_URL": "https://github.com", "GITHUB_API_URL": self.github.api_url,
            "GITHUB_HEAD_REF": context["github"]["head_ref"], "GITHUB_BASE_REF": context["github"]["base_ref"],
            "RUNNER_OS": "Linux", "RUNNER_ARCH": "X64", "RUNNER_TEMP": self.runner_temp, "RUNNER_TOOL_CACHE": self.tool_cache,
        }
        id_request = None
        if permissions.get("id-token") == "write":
            id_request = self.github.issue_id_token_request(self.claims(leg))
            base_env["ACTIONS_ID_TOKEN_REQUEST_URL"] = f"{self.github.api_url}/_services/oidc/token?api-version=2.0"
            base_env["ACTIONS_ID_TOKEN_REQUEST_TOKEN"] = id_request
        state = {"env": dict(base_env, **context["env"]), "paths": [], "failed": False}
        defaults = dict((run.document.get("defaults") or {}).get("run", {}), **((spec.get("defaults") or {}).get("run", {})))
        log_start = self.request_log_size()
        storage_start = len(self.storage.log) if self.storage else 0
        identity_start = len(self.identity.log) if self.identity else 0
        leg.api["status"] = "in_progress"
        for number, step in enumerate(spec["steps"]):
            unknown = set(step) - KNOWN_STEP_KEYS
            if unknown:
                raise Unsupported(f"{run.workflow_file} step {step.get('name', number)}: keys not modelled: {sorted(unknown)}")
            context["env"] = {k: v for k, v in state["env"].items() if k not in base_env or k in context["env"]}
            context["job"] = {"status": "failure" if state["failed"] else "success"}

            def status(name):
                return {"always": True, "cancelled": False, "success": not state["failed"], "failure": state["failed"]}[name]

            title = to_string(interpolate(step.get("name", step.get("uses", step.get("run", "")).splitlines()[0]), context))
            if not condition(step.get("if"), context, status):
                if "id" in step:
                    leg.steps[step["id"]] = {"outputs": {}, "outcome": "skipped", "conclusion": "skipped"}
                leg.log.append(f"--- {title}: skipped")
                continue
            step_env = dict(state["env"])
            for name, value in (step.get("env") or {}).items():
                step_env[name] = to_string(interpolate(value, context))
            if "run" in step:
                code, outputs = self.run_step(leg, step, number, title, step_env, state, defaults, context)
            elif "uses" in step:
                code, outputs = self.use_step(leg, step, title, step_env, state, context)
            else:
                raise Unsupported(f"step {title}: neither run nor uses")
            outcome = "success" if code == 0 else "failure"
            conclusion = "success" if code == 0 or truthy(interpolate(step.get("continue-on-error", False), context)) else "failure"
            if "id" in step:
                leg.steps[step["id"]] = {"outputs": outputs, "outcome": outcome, "conclusion": conclusion}
            if conclusion == "failure":
                state["failed"] = True
        context["env"] = {k: v for k, v in state["env"].items() if k not in base_env}
        for name, value in (spec.get("outputs") or {}).items():
            leg.outputs[name] = to_string(interpolate(value, context))
        leg.requests = self.request_log_since(log_start)
        leg.storage = list(self.storage.log[storage_start:]) if self.storage else []
        leg.identity = list(self.identity.log[identity_start:]) if self.identity else []
        self.github.revoke(token)
        if id_request:
            self.github.revoke(id_request)
        return "failure" if state["failed"] else "success"

    def request_log_size(self):
        if not self.request_log or not os.path.exists(self.request_log):
            return 0
        return os.path.getsize(self.request_log)

    def request_log_since(self, offset):
        if not self.request_log or not os.path.exists(self.request_log):
            return []
        with open(self.request_log) as handle:
            handle.seek(offset)
            return [json.loads(line) for line in handle.read().splitlines() if line.strip()]

    def file_commands(self, leg):
        files = {}
        for kind in ("GITHUB_OUTPUT", "GITHUB_ENV", "GITHUB_PATH", "GITHUB_STEP_SUMMARY", "GITHUB_STATE"):
            path = os.path.join(self.runner_temp, "_runner_file_commands", f"{kind.lower()}_{next(Leg.ids)}")
            os.makedirs(os.path.dirname(path), exist_ok=True)
            open(path, "w").close()
            files[kind] = path
        return files

    def collect(self, leg, files, state, output_text):
        outputs = read_file_commands(files["GITHUB_OUTPUT"])
        state["env"].update(read_file_commands(files["GITHUB_ENV"]))
        with open(files["GITHUB_PATH"]) as handle:
            state["paths"].extend(line for line in handle.read().split("\n") if line)
        with open(files["GITHUB_STEP_SUMMARY"]) as handle:
            leg.summary += handle.read()
        for line in output_text.splitlines():
            match = re.match(r"::(error|warning|notice)( [^:]*)?::(.*)", line)
            if match:
                leg.annotations.append((match.group(1), match.group(3)))
        return outputs

    def path_for(self, state):
        return ":".join(list(reversed(state["paths"])) + [STANDINS, SYSTEM_PATH])

    def run_step(self, leg, step, number, title, step_env, state, defaults, context):
        shell = step.get("shell", defaults.get("shell"))
        script = os.path.join(self.runner_temp, f"{leg.id}_{number}.sh")
        with open(script, "w") as handle:
            handle.write(to_string(interpolate(step["run"], context)))
        if shell is None:
            command = ["bash", "-e", script]  # GitHub's default on Linux: `bash -e {0}`, without pipefail
        elif shell == "bash":
            command = ["bash", "--noprofile", "--norc", "-eo", "pipefail", script]
        elif shell == "sh":
            command = ["sh", "-e", script]
        else:
            raise Unsupported(f"shell {shell!r} is not modelled")
        files = self.file_commands(leg)
        environment = dict(step_env, **files, PATH=self.path_for(state))
        cwd = os.path.join(self.workspace, to_string(interpolate(step.get("working-directory", defaults.get("working-directory", "")), context)))
        try:
            result = subprocess.run(command, cwd=cwd, env=environment, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                    text=True, timeout=600)
            code, text = result.returncode, result.stdout
        except subprocess.TimeoutExpired as error:
            code, text = 124, (error.stdout or "") + "\n(simulator: the step timed out)"
        leg.log.append(f"--- {title} (exit {code})\n{text}")
        return code, self.collect(leg, files, state, text)

    # --- the stand-ins for `uses:` ---------------------------------------------------------------------------

    def use_step(self, leg, step, title, step_env, state, context):
        action, _, version = step["uses"].partition("@")
        inputs = {k: interpolate(v, context) for k, v in (step.get("with") or {}).items()}
        inputs = {k: to_string(v) for k, v in inputs.items()}
        files = self.file_commands(leg)
        environment = dict(step_env, **files, PATH=self.path_for(state))
        standins = {
            "actions/checkout": self.checkout,
            "google-github-actions/auth": self.auth,
            "actions/upload-artifact": self.upload_artifact,
            "actions/download-artifact": self.download_artifact,
        }
        if action == "fcmctl/fcmctl":
            function = self.setup_fcmctl
        elif action in standins:
            release = RELEASES.get((action, version)) if re.fullmatch(r"[0-9a-f]{40}", version) else version
            if release is None:
                raise Unsupported(f"action {step['uses']}: a commit the simulator does not know as a release (RELEASES)")
            if release.split(".")[0] not in MODELLED_MAJORS[action]:
                raise Unsupported(f"action {step['uses']} ({release}) is not modelled")
            function = standins[action]
        else:
            raise Unsupported(f"action {step['uses']} is not modelled")
        lines = []
        try:
            outputs = function(leg, inputs, environment, files, lines, version) or {}
            code = 0
        except StepFailed as failure:
            lines.append(f"::error::{failure}")
            outputs, code = {}, 1
        text = "\n".join(lines)
        leg.log.append(f"--- {title} ({step['uses']}, exit {code})\n{text}")
        collected = self.collect(leg, files, state, text)
        return code, dict(collected, **outputs)

    def checkout(self, leg, inputs, environment, files, lines, version):
        known = {"ref", "fetch-depth", "persist-credentials", "clean"}
        if set(inputs) - known:
            raise Unsupported(f"actions/checkout inputs not modelled: {sorted(set(inputs) - known)}")
        ref = inputs.get("ref") or leg.run.sha
        depth = int(inputs.get("fetch-depth", "1") or "1")
        for entry in os.listdir(self.workspace):
            full = os.path.join(self.workspace, entry)
            shutil.rmtree(full) if os.path.isdir(full) and not os.path.islink(full) else os.remove(full)
        git("init", "-q", self.workspace)
        git("remote", "add", "origin", self.repo.origin, cwd=self.workspace)
        fetch = ["fetch", "-q", "--no-tags"] + (["--depth", str(depth)] if depth > 0 else []) + ["origin"]
        if re.fullmatch(r"[0-9a-f]{40}", ref):
            git(*fetch, ref, cwd=self.workspace)
        else:
            name = ref if ref.startswith("refs/") else f"refs/heads/{ref}"
            if git("ls-remote", "origin", name, cwd=self.workspace) == "":
                raise StepFailed(f"A branch or tag with the name '{ref}' could not be found")
            git(*fetch, f"+{name}:{name.replace('refs/heads/', 'refs/remotes/origin/')}", cwd=self.workspace)
        git("checkout", "-q", "--detach", "FETCH_HEAD", cwd=self.workspace)
        lines.append(f"checked out {git('rev-parse', 'HEAD', cwd=self.workspace)}")
        return {"commit": git("rev-parse", "HEAD", cwd=self.workspace), "ref": ref}

    def auth(self, leg, inputs, environment, files, lines, version):
        """google-github-actions/auth@v2 with Workload Identity Federation and service account impersonation:
        writes the external_account credentials file it writes (in the workspace, gha-creds-*.json) and exports
        the variables it exports. Google's endpoints in that file (sts, iamcredentials) are fcm-emulator's; the
        simulator also points FCM and Cloud Storage at their stand-ins (FCM_ENDPOINT, FCMCTL_STORAGE_ENDPOINT,
        CLOUDSDK_API_ENDPOINT_OVERRIDES_STORAGE), as Google's hosts are not reachable here. Like the real action
        it checks nothing with Google: a service account the job may not impersonate is refused when the
        credentials are first used (IAM Credentials' 403), by fcmctl or gcloud."""
        known = {"workload_identity_provider", "service_account", "project_id", "create_credentials_file", "export_environment_variables"}
        if set(inputs) - known:
            raise Unsupported(f"google-github-actions/auth inputs not modelled: {sorted(set(inputs) - known)}")
        if not environment.get("ACTIONS_ID_TOKEN_REQUEST_URL"):
            raise StepFailed("google-github-actions/auth failed with: gha-creds: GitHub Actions did not inject $ACTIONS_ID_TOKEN_REQUEST_TOKEN "
                             "or $ACTIONS_ID_TOKEN_REQUEST_URL into this job. This most likely means the GitHub Actions workflow "
                             "permissions are incorrect, or this job is being run from a fork.")
        provider = inputs.get("workload_identity_provider", "")
        account = inputs.get("service_account", "")
        if not re.fullmatch(r"projects/\d+/locations/global/workloadIdentityPools/[^/]+/providers/[^/]+", provider):
            raise StepFailed(f"google-github-actions/auth failed with: the workload_identity_provider {provider!r} is not a full provider name")
        if not account or "@" not in account:
            raise StepFailed(f"google-github-actions/auth failed with: the service_account {account!r} is not an email address")
        fcm = self.endpoints["fcm"]
        sts, iam = self.endpoints.get("sts", fcm), self.endpoints.get("iamcredentials", fcm)
        document = {
            "type": "external_account", "audience": f"//iam.googleapis.com/{provider}",
            "subject_token_type": "urn:ietf:params:oauth:token-type:jwt", "token_url": f"{sts}/v1/token",
            "service_account_impersonation_url": f"{iam}/v1/projects/-/serviceAccounts/{account}:generateAccessToken",
            "credential_source": {
                "url": environment["ACTIONS_ID_TOKEN_REQUEST_URL"] + "&audience=" + f"https://iam.googleapis.com/{provider}",
                "headers": {"Authorization": f"Bearer {environment['ACTIONS_ID_TOKEN_REQUEST_TOKEN']}"},
                "format": {"type": "json", "subject_token_field_name": "value"}},
        }
        path = os.path.join(self.workspace, f"gha-creds-{leg.id:016x}.json")
        with open(path, "w") as handle:
            json.dump(document, handle)
        os.chmod(path, 0o600)
        exported = {"CLOUDSDK_AUTH_CREDENTIAL_FILE_OVERRIDE": path, "GOOGLE_APPLICATION_CREDENTIALS": path, "GOOGLE_GHA_CREDS_PATH": path,
                    # The simulator's stand-ins for Google's hosts:
                    "FCM_ENDPOINT": fcm, "FCMCTL_STORAGE_ENDPOINT": self.endpoints["storage"],
                    "CLOUDSDK_API_ENDPOINT_OVERRIDES_STORAGE": self.endpoints["storage"] + "/storage/v1/"}
        if inputs.get("project_id"):
            exported.update(CLOUDSDK_CORE_PROJECT=inputs["project_id"], GOOGLE_CLOUD_PROJECT=inputs["project_id"])
        with open(files["GITHUB_ENV"], "a") as handle:
            for name, value in exported.items():
                handle.write(f"{name}={value}\n")
        lines.append(f"Created credentials file at {path} for {account}")
        return {"credentials_file_path": path}

    def setup_fcmctl(self, leg, inputs, environment, files, lines, version):
        known = {"version", "install-emulator", "base-url"}
        if set(inputs) - known:
            raise Unsupported(f"setup action inputs not modelled: {sorted(set(inputs) - known)}")
        wanted = inputs.get("version", "latest").lstrip("v")
        if version.lstrip("v") != wanted:
            raise StepFailed(f"the workflow pins fcmctl/fcmctl@{version} but asks for version {wanted}")
        folder = os.path.join(self.tool_cache, "fcmctl", wanted, "x86_64", "bin")
        os.makedirs(folder, exist_ok=True)
        target = os.path.join(folder, "fcmctl")
        if not os.path.exists(target):
            os.symlink(self.fcmctl, target)
        with open(files["GITHUB_PATH"], "a") as handle:
            handle.write(folder + "\n")
        lines.append(f"Installed the built fcmctl in {folder} (stand-in for release {wanted})")
        return {"version": wanted, "path": folder}

    def upload_artifact(self, leg, inputs, environment, files, lines, version):
        known = {"name", "path", "if-no-files-found", "retention-days", "overwrite", "include-hidden-files"}
        if set(inputs) - known:
            raise Unsupported(f"actions/upload-artifact inputs not modelled: {sorted(set(inputs) - known)}")
        name = inputs.get("name") or "artifact"
        patterns = [p.strip() for p in inputs.get("path", "").splitlines() if p.strip()]
        if not patterns or any(p.startswith("!") for p in patterns):
            raise Unsupported("upload-artifact: path with exclusions (or none) is not modelled")
        roots, found = [], []
        for pattern in patterns:
            full = pattern if os.path.isabs(pattern) else os.path.join(self.workspace, pattern)
            matches = glob.glob(full, recursive=True)
            for match in matches:
                if os.path.isdir(match):
                    roots.append(match)
                    found += [os.path.join(d, f) for d, _, fs in os.walk(match) for f in fs]
                else:
                    roots.append(os.path.dirname(match))
                    found.append(match)
        if not found:
            mode = inputs.get("if-no-files-found", "warn")
            if mode == "error":
                raise StepFailed(f"No files were found with the provided path: {inputs.get('path')}. No artifacts will be uploaded.")
            lines.append(("::warning::" if mode == "warn" else "") + f"No files were found with the provided path: {inputs.get('path')}. No artifacts will be uploaded.")
            return {}
        if name in leg.run.artifacts and inputs.get("overwrite", "false") != "true":
            raise StepFailed("Failed to CreateArtifact: Received non-retryable error: Failed request: (409) Conflict: an artifact with this name already exists on the workflow run")
        root = os.path.commonpath(roots)
        contents = {}
        for file in found:
            with open(file, "rb") as handle:
                contents[os.path.relpath(file, root)] = handle.read()
        leg.run.artifacts[name] = {"id": next(Leg.ids), "name": name, "files": contents}
        lines.append(f"Artifact {name} has been successfully uploaded ({len(contents)} files)")
        return {"artifact-id": str(leg.run.artifacts[name]["id"])}

    def download_artifact(self, leg, inputs, environment, files, lines, version):
        known = {"name", "pattern", "path", "merge-multiple", "run-id", "github-token", "repository"}
        if set(inputs) - known:
            raise Unsupported(f"actions/download-artifact inputs not modelled: {sorted(set(inputs) - known)}")
        run = leg.run
        if inputs.get("run-id"):
            if not inputs.get("github-token"):
                raise StepFailed("github-token is required to download artifacts of another run")
            held = self.github.tokens.get(inputs["github-token"])
            if held is None or held.get("actions") not in ("read", "write"):
                raise StepFailed("Unable to download artifact(s): Resource not accessible by integration (the token needs actions: read)")
            run = next((r for r in self.runs if str(r.id) == inputs["run-id"]), None)
            if run is None:
                raise StepFailed(f"Unable to download artifact(s): run {inputs['run-id']} not found")
        path = inputs.get("path") or self.workspace
        path = path if os.path.isabs(path) else os.path.join(self.workspace, path)
        if inputs.get("name"):
            artifact = run.artifacts.get(inputs["name"])
            if artifact is None:
                raise StepFailed(f"Unable to download artifact(s): Artifact not found for name: {inputs['name']}")
            chosen = [(artifact, path)]
        else:
            pattern = inputs.get("pattern") or "*"
            merge = inputs.get("merge-multiple", "false") == "true"
            chosen = [(a, path if merge else os.path.join(path, n)) for n, a in sorted(run.artifacts.items()) if fnmatch.fnmatchcase(n, pattern)]
        for artifact, target in chosen:
            for relative, data in artifact["files"].items():
                full = os.path.join(target, relative)
                os.makedirs(os.path.dirname(full), exist_ok=True)
                with open(full, "wb") as handle:
                    handle.write(data)
        lines.append(f"Downloaded {len(chosen)} artifact(s) to {path}")
        return {"download-path": path}


class StepFailed(Exception):
    """A stand-in action failed, with the message the real action prints."""


def read_file_commands(path):
    """name=value lines and name<<DELIMITER … DELIMITER blocks, as the runner reads GITHUB_OUTPUT/GITHUB_ENV."""
    values = {}
    with open(path) as handle:
        lines = handle.read().split("\n")
    index = 0
    while index < len(lines):
        line = lines[index]
        index += 1
        if not line:
            continue
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            name, delimiter = line.split("<<", 1)
            body = []
            while index < len(lines) and lines[index] != delimiter:
                body.append(lines[index])
                index += 1
            if index >= len(lines):
                raise Unsupported(f"{path}: no closing {delimiter}")
            index += 1
            values[name] = "\n".join(body)
        elif "=" in line:
            name, value = line.split("=", 1)
            values[name] = value
        else:
            raise Unsupported(f"malformed file-command line: {line!r}")
    return values
