"""The pipeline simulator (Tests/cli/pipelinesim): the three example workflows of examples/github-actions/
run from their YAML, their `run:` blocks in bash with GitHub's environment files, their `uses:` steps by
local stand-ins, against fcm-emulator (FCM, and the token services Workload Identity Federation signs in
with), fake-gcs-server (the state bucket) and a stand-in for GitHub's REST API, for a repository laid out
as examples/github-actions/README.md says: fcm/base, fcm/dev, fcm/prod, each environment its own project
and state prefix. Google's IAM stands in front of both, as that README's gcloud commands set it up
(pipelinesim/google.py): each environment has a read-only *planner* (FCM viewer, storage.objectViewer on
fcmctl/ENV/) that any job of the repository may impersonate, and an *applier* (FCM admin, storage.objectUser
on fcmctl/ENV/) that only jobs on refs/heads/main in the GitHub Environments fcmctl-ENV-apply and
fcmctl-ENV-approval may impersonate; the bucket answers 403 to anything a caller's roles do not grant. The
scenarios replay a team's weeks, in order, and share one world:

  1. two pull requests planned, each environment's plan commented and its saved plan kept as an artifact
  2. A merged and applied (the reviewed plan, pinned to the comment's digest)
  3. B merged after A: its plan is stale, main is planned again, approved, applied, converged
  4. three merges in quick succession: the middle run is cancelled while pending, nothing is lost
  5. a failing plan posts its error; fixed, the comment becomes the plan
  6. nightly drift opens an issue (creating its label), updates it the next night, closes it when clean
  7. a drift run that fails is reported in the environment's issue
  8. the pull-request job's identity is refused every write to the state prefix (fcmctl and gcloud)
  9. the apply job's identity may write it
 10. FCM refuses the pull-request job's identity every change (once fcm-emulator enforces IAM)
 11. workflow copies that give the pull-request job the applier are refused at sign-in or by the Environment
 12. a saved plan whose artifact expired before the merge: main is planned again and applied after approval
and after every scenario: each environment's jobs sent FCM requests for their own project only, signed in as
their own environment's planner (plan, drift) or applier (apply), touched only their own state prefix, the
planner never wrote, and nothing was refused that the workflows should be allowed."""
import copy
import json
import os
import re
import shutil
import subprocess

import pytest
import yaml

from fcmharness import EMULATOR, FCMCTL, ROOT, FakeGCS
from pipelinesim.google import StorageProxy, WorkloadIdentity
from pipelinesim.runner import Simulator

# FCMCTL_PIPELINE_WORKFLOWS runs the scenarios on edited copies (to see a mistake caught).
WORKFLOWS = os.environ.get("FCMCTL_PIPELINE_WORKFLOWS", os.path.join(ROOT, "examples/github-actions"))
SUBJECT = "eyJhbGciOiJSUzI1NiJ9.github-oidc.sig"  # what fcm-emulator's STS accepts; the WIF stand-in forwards it
REPOSITORY = "acme/fleet"
BUCKET = "acme-fcm-state"
PROJECTS = {"dev": "fleet-dev", "prod": "fleet-prod"}
SENDERS = {"dev": "111111111111", "prod": "222222222222"}
# Both identities of each environment, in that environment's project, as the README's gcloud commands create them
# (the workload identity pool and the state bucket are in the CI project acme-ci).
PLANNERS = {e: f"fcmctl-plan@{PROJECTS[e]}.iam.gserviceaccount.com" for e in PROJECTS}
APPLIERS = {e: f"fcmctl-apply@{PROJECTS[e]}.iam.gserviceaccount.com" for e in PROJECTS}
POOL = "projects/123456/locations/global/workloadIdentityPools/github"
PROVIDER = f"{POOL}/providers/fleet"
# The repository variable the three workflows' matrices read: the one place that lists the environments.
ENVIRONMENTS = json.dumps([{"environment": e, "planner": PLANNERS[e], "applier": APPLIERS[e]} for e in PROJECTS])
# The GitHub Environments the apply workflow runs in: main only; the approval ones with required reviewers.
GITHUB_ENVIRONMENTS = {name: spec for e in PROJECTS for name, spec in (
    (f"fcmctl-{e}-apply", {"branches": ["main"]}),
    (f"fcmctl-{e}-approval", {"reviewers": True, "branches": ["main"]}))}


def github_attributes(claims):
    """The provider's --attribute-mapping, as the README writes it in CEL:
    google.subject=assertion.sub,attribute.repository=assertion.repository,attribute.sub_ref=assertion.sub + ':ref:' + assertion.ref
    (sub_ref: the job's subject, which names its Environment when it has one, and the ref it runs on, in one
    value that one binding can match: repo:acme/fleet:environment:fcmctl-prod-apply:ref:refs/heads/main)."""
    return {"google.subject": claims["sub"], "attribute.repository": claims["repository"],
            "attribute.sub_ref": claims["sub"] + ":ref:" + claims["ref"]}


def github_condition(claims):
    """The provider's --attribute-condition: assertion.repository == 'acme/fleet'"""
    return claims["repository"] == REPOSITORY


def workload_identity_users():
    """Each service account's roles/iam.workloadIdentityUser members, as the README's bindings grant them."""
    members = {}
    for e in PROJECTS:
        members[PLANNERS[e]] = [f"principalSet://iam.googleapis.com/{POOL}/attribute.repository/{REPOSITORY}"]
        members[APPLIERS[e]] = [f"principalSet://iam.googleapis.com/{POOL}/attribute.sub_ref/"
                                f"repo:{REPOSITORY}:environment:fcmctl-{e}-{kind}:ref:refs/heads/main" for kind in ("apply", "approval")]
    return members


def bucket_bindings():
    """The bucket's IAM bindings, as the README grants them: each role limited to the environment's prefix."""
    return [binding for e in PROJECTS for binding in (
        (PLANNERS[e], "roles/storage.objectViewer", f"fcmctl/{e}/"),
        (APPLIERS[e], "roles/storage.objectUser", f"fcmctl/{e}/"))]


def emulator_iam_flags():
    """fcm-emulator's IAM grants for the simulation: each environment's planner FCM viewer and its applier FCM admin,
    on that environment's project, and nothing else (--iam-default none: no admin on an account's own project
    unless granted, as in Google's IAM)."""
    flags = ["--iam-default", "none"]
    for e, project in PROJECTS.items():
        flags += ["--iam", f"{PLANNERS[e]}=roles/firebasecloudmessaging.viewer@{project}",
                  "--iam", f"{APPLIERS[e]}=roles/firebasecloudmessaging.admin@{project}"]
    return flags


def token(environment, name):
    """A made-up FCM token, different per environment (a registration belongs to one project)."""
    return f"{environment}-{name}:APA91b{'x' * 24}"


def devices(environment, names):
    lines = ["devices:"]
    for name in names:
        lines.append(f"  {name}: {{ token: \"{token(environment, name)}\", labels: {{ role: kiosk }} }}")
    return "\n".join(lines) + "\n"


def project(environment):
    return (f"apiVersion: fcmctl/v1\nproject:\n  id: {PROJECTS[environment]}\n  senderId: \"{SENDERS[environment]}\"\n")


def topics(names):
    lines = ["topics:"]
    for name in names:
        lines += [f"  {name}:", "    ownership: authoritative", "    members: { selector: { role: kiosk } }"]
    return "\n".join(lines) + "\n"


class Emulator:
    """fcm-emulator with the request log in a file, accepting the subject token the workload identity stand-in
    forwards, and auto-registering (every environment's made-up tokens exist, in the project that first uses them)."""

    def __init__(self, folder, flags=()):
        self.log = os.path.join(folder, "requests.jsonl")
        self.process = subprocess.Popen(
            [EMULATOR, "--host", "127.0.0.1", "--port", "0", "--auto-register", "--request-log", self.log,
             "--accept-subject-token", SUBJECT, *flags],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        line = self.process.stdout.readline()
        assert line.startswith("fcm-emulator listening on http://"), line
        self.base = line.strip().split(" on ")[1]

    def stop(self):
        self.process.terminate()
        self.process.wait(timeout=10)

    def request(self, method, path, body=None):
        import urllib.request

        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(self.base + path, data=data, method=method, headers={
            "Content-Type": "application/json", "Authorization": "Bearer owner", "access_token_auth": "true"})
        with urllib.request.urlopen(request) as response:
            text = response.read()
            return json.loads(text) if text else {}

    def subscriptions(self, environment):
        """{topic: sorted registrations} of one environment's project, from the emulator's state dump."""
        state = self.request("GET", "/emulator/v1/state")
        found = {}
        for registration in state.get("registrations", []):
            if registration.get("project") not in (PROJECTS[environment], None):
                continue
            for topic in registration.get("topics", []):
                found.setdefault(topic, []).append(registration["id"])
        return {topic: sorted(members) for topic, members in found.items()}


def start_world(root, workflows=WORKFLOWS):
    """fcm-emulator, fake-gcs-server with the bucket, Google's IAM in front of both, and the simulator of this
    repository's GitHub: what test_pipeline.py and test_comment_size.py run in. world.stop() ends it all."""
    emulator = Emulator(root, emulator_iam_flags())
    gcs = FakeGCS()
    gcs.create_bucket(BUCKET)
    storage = StorageProxy(gcs.base, f"{emulator.base}/tokeninfo", bucket_bindings()).start()
    key = os.urandom(32)
    identity = WorkloadIdentity(emulator.base, SUBJECT, PROVIDER, key, github_attributes, github_condition,
                                workload_identity_users()).start()
    sim = Simulator(
        root=root, workflows_dir=workflows, repository=REPOSITORY, fcmctl=FCMCTL,
        endpoints={"fcm": emulator.base, "storage": storage.base, "sts": identity.base, "iamcredentials": identity.base},
        variables={"FCMCTL_STATE_BUCKET": BUCKET, "GCP_WORKLOAD_IDENTITY_PROVIDER": PROVIDER, "FCMCTL_ENVIRONMENTS": ENVIRONMENTS},
        environments=GITHUB_ENVIRONMENTS, request_log=emulator.log, storage=storage, identity=identity, oidc_key=key)
    world = type("World", (), {})()
    world.sim, world.emulator, world.gcs, world.storage, world.identity, world.root = sim, emulator, gcs, storage, identity, root
    world.checked = 0

    def stop():
        sim.stop()
        storage.stop()
        identity.stop()
        emulator.stop()
        gcs.stop()
    world.stop = stop
    return world


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    if shutil.which("jq") is None:
        pytest.skip("jq is not installed (the workflows use it, as GitHub's runners have it)")
    world = start_world(str(tmp_path_factory.mktemp("pipeline")))
    world.sim.repo.initial({
        "README.md": "fleet\n",
        "fcm/base/topics.yaml": topics(["announcements"]),
        "fcm/dev/project.yaml": project("dev"),
        "fcm/dev/devices.yaml": devices("dev", ["kiosk-1", "kiosk-2"]),
        "fcm/prod/project.yaml": project("prod"),
        "fcm/prod/devices.yaml": devices("prod", ["kiosk-1", "kiosk-2", "kiosk-3"]),
    })
    yield world
    world.stop()


# --- helpers ---------------------------------------------------------------------------------------------------


def explain(sim, legs=None):
    """Every executed leg's log, for a failing assertion's message."""
    out = []
    for leg in legs if legs is not None else sim.legs:
        out.append(f"=== {leg.run.workflow_file}#{leg.run.id} {leg.api['name']}: {leg.state}/{leg.result}")
        out.extend(leg.log)
    return "\n".join(out)[-20000:]


def legs_of(runs, job=None):
    return [leg for run in runs for j in run.jobs.values() for leg in j["legs"] if job is None or leg.job_id == job]


def leg(runs, name):
    found = [l for l in legs_of(runs) if l.api["name"] == name]
    assert len(found) == 1, [l.api["name"] for l in legs_of(runs)]
    return found[0]


def comment(sim, number, marker):
    found = [c for c in sim.github.comments_on(number) if c["body"].startswith(marker)]
    assert len(found) <= 1, f"{len(found)} comments start with {marker}"
    return found[0] if found else None


def plan_main(world, environment):
    """`fcmctl plan --detailed-exitcode` of main's HEAD for one environment, outside the simulator: 0 when FCM
    and the environment's state match main."""
    work = os.path.join(world.root, f"check-{environment}")
    shutil.rmtree(work, ignore_errors=True)
    subprocess.run(["git", "clone", "-q", os.path.join(world.root, "git", "origin.git"), work], check=True)
    return subprocess.run(
        [FCMCTL, "plan", "--detailed-exitcode", "-f", "fcm/base", "-f", f"fcm/{environment}", "--state", f"gs://{BUCKET}/fcmctl/{environment}"],
        cwd=work, capture_output=True, text=True, timeout=300,
        env={"PATH": os.environ["PATH"], "FCM_ENDPOINT": world.emulator.base, "FCM_ACCESS_TOKEN": "owner",
             "STORAGE_EMULATOR_HOST": world.gcs.host, "HOME": work})


def assert_converged(world):
    for environment in PROJECTS:
        result = plan_main(world, environment)
        assert result.returncode == 0, f"{environment} is not converged to main:\n{result.stdout}{result.stderr}"


WRITES = {"storage.objects.create", "storage.objects.delete", "storage.objects.update"}


def expected_identity(one):
    """The service account a leg signs in as: the applier in the apply workflow's jobs, the planner elsewhere."""
    environment = one.matrix.get("environment")
    if not environment:
        return None
    return APPLIERS[environment] if one.job_id in ("apply", "approve-replan") else PLANNERS[environment]


def assert_projects_kept_apart(world, expect=tuple(PROJECTS)):
    """Every FCM request of an environment's job names that environment's project; its token was obtained by
    impersonating that environment's planner (plan, drift) or applier (apply), which the workload identity
    stand-in allowed; its bucket requests came from that account, within the environment's prefix, all allowed,
    and the planner's were reads. Jobs without an environment sent no FCM or bucket request."""
    seen = {environment: 0 for environment in PROJECTS}
    for one in world.sim.legs[world.checked:]:
        environment = one.matrix.get("environment")
        account = expected_identity(one)
        paths = [entry.get("path", "") for entry in one.requests]
        if environment and any(p.startswith("/v1/projects/" + PROJECTS[environment]) for p in paths):
            seen[environment] += 1
            assert any(f"/serviceAccounts/{account}:generateAccessToken" in p for p in paths), (one, "FCM reached without the sign-in")
            assert any(d["kind"] == "impersonate" and d["account"] == account for d in one.identity), (one, "not through the WIF stand-in")
            assert any(e["permission"] == "storage.objects.get" for e in one.storage), (one, "the state was not read through the storage proxy")
        for entry in one.requests:
            path = entry.get("path", "")
            if path.startswith("/v1/projects/-/serviceAccounts/"):
                assert environment and f"/serviceAccounts/{account}:" in path, (one, path)
            elif path.startswith("/v1/projects/"):
                assert environment, (one, path)
                assert path.startswith(f"/v1/projects/{PROJECTS[environment]}/"), (one, path)
            elif path.startswith("/fcm/") or path.startswith("/iid/"):
                raise AssertionError(f"{one}: a legacy request {path} (the manifests use the v1 API only)")
        for decision in one.identity:
            assert decision["allowed"] and decision["account"] in (account, None), (one, decision)
        for entry in one.storage:
            assert environment and entry["caller"] == account, (one, entry)
            assert entry["allowed"], (one, "refused", entry)
            assert (entry["object"] or entry["prefix"] or "").startswith(f"fcmctl/{environment}/"), (one, entry)
            if account == PLANNERS.get(environment):
                assert entry["permission"] not in WRITES, (one, "the planner wrote", entry)
    assert all(seen[environment] for environment in expect), f"the check saw no FCM request of some environment: {seen}"
    world.checked = len(world.sim.legs)
    assert world.storage.unmodelled == [], world.storage.unmodelled
    # The bucket holds the states only: no saved plan (they are artifacts).
    for name in world.gcs.names(BUCKET):
        assert re.fullmatch(r"fcmctl/(dev|prod)/(state\.json|state\.serial|state\.lock|journal/.*)", name), name
    # Saved plans are artifacts of their own (the PR's fcmctl-saved-plan-ENV, the re-plan's handoff); nothing
    # else holds a registration in full.
    for each in world.sim.runs:
        for name, artifact in each.artifacts.items():
            for file, data in artifact["files"].items():
                if re.fullmatch(r"fcmctl-(saved-plan|replan)-(dev|prod)", name) and file == "fcmctl.plan":
                    assert json.loads(data)["digest"].startswith("sha256:")
                    continue
                assert b"APA91b" not in data, f"artifact {name} of run {each.id}: {file} holds a registration in full"
                assert not file.endswith(".plan"), f"artifact {name} of run {each.id} holds a saved plan"


def approve_all(world):
    for environment in sorted({l.environment for l in world.sim.waiting_for_approval()}):
        world.sim.approve(environment)
    world.sim.run_until_idle()


# --- the scenarios ----------------------------------------------------------------------------------------------


def test_01_two_pull_requests_are_planned_per_environment(world):
    sim = world.sim
    # Bootstrap: the first manifests land by a push without a pull request: planned on main, approved, applied.
    bootstrap = sim.dispatch("apply-on-merge.yml")
    sim.run_until_idle()
    assert {l.environment for l in sim.waiting_for_approval()} == {"fcmctl-dev-approval", "fcmctl-prod-approval"}, explain(sim)
    approve_all(world)
    assert all(l.result == "success" for l in legs_of(bootstrap)), explain(sim, legs_of(bootstrap))
    sim.approved.clear()
    assert_converged(world)

    world.a, runs_a = sim.open_pull_request("topic-news", {"fcm/base/topics.yaml": topics(["announcements", "news"])}, "Add news")
    world.b, runs_b = sim.open_pull_request("prod-kiosk-4", {"fcm/prod/devices.yaml": devices("prod", ["kiosk-1", "kiosk-2", "kiosk-3", "kiosk-4"])},
                                            "Add a prod kiosk")
    sim.run_until_idle()
    world.plan_run_a = runs_a[0].id
    for runs, pull, changes in ((runs_a, world.a, {"dev": True, "prod": True}), (runs_b, world.b, {"dev": False, "prod": True})):
        assert [r.workflow_file for r in runs] == ["plan-on-pr.yml"]
        for environment in PROJECTS:
            one = leg(runs, f"plan ({environment})")
            assert one.result == "success", explain(sim, [one])
            found = comment(sim, pull["number"], f"<!-- fcmctl:plan:{environment} -->")
            assert found, f"no {environment} plan comment on #{pull['number']}"
            body = found["body"]
            assert f"Planned for `{pull['head']['sha']}` with digest `sha256:" in body
            assert "<!-- fcmctl:plan -->" in body, "fcmctl's own Markdown follows the environment's header"
            digest = re.search(r"with digest `(sha256:[0-9a-f]{64})`", body).group(1)
            assert one.steps["plan"]["outputs"]["changes"] == str(changes[environment]).lower()
            # The saved plan is an artifact of the run (the planner cannot write the bucket); the report is redacted.
            saved = runs[0].artifacts[f"fcmctl-saved-plan-{environment}"]["files"]
            assert sorted(saved) == ["fcmctl.plan"] and json.loads(saved["fcmctl.plan"])["digest"] == digest
            artifact = runs[0].artifacts[f"fcmctl-plan-{environment}"]["files"]
            assert sorted(artifact) == ["plan.json", "plan.md"]
            for name, data in artifact.items():
                assert b"APA91b" not in data, f"{name} of the artifact holds a registration in full"
    assert sim.github.unknown == [] and sim.github.refused == []
    assert_projects_kept_apart(world)


def test_02_a_is_merged_and_its_reviewed_plan_applied(world):
    sim = world.sim
    runs = sim.merge(world.a["number"])
    sim.run_until_idle()
    assert [r.workflow_file for r in runs] == ["apply-on-merge.yml"]
    for environment in PROJECTS:
        one = leg(runs, f"apply ({environment})")
        assert one.result == "success", explain(sim, [one])
        assert one.steps["find"]["outputs"]["reviewed"] == "true", explain(sim, [one])
        # The plan run of A's head commit, not the latest plan run (B's, planned after A's).
        assert one.steps["find"]["outputs"]["plan_run"] == str(world.plan_run_a)
        assert one.steps["find"]["outputs"]["head"] == world.a["head"]["sha"]
        assert one.steps["apply"]["outputs"]["exitcode"] == "0"
        assert one.steps["replan"]["outcome"] == "skipped"
        assert "applied" in comment(sim, world.a["number"], f"<!-- fcmctl:apply:{environment} -->")["body"]
    assert sim.waiting_for_approval() == []
    assert world.emulator.subscriptions("prod")["news"] == sorted(token("prod", k) for k in ("kiosk-1", "kiosk-2", "kiosk-3"))
    assert world.emulator.subscriptions("dev")["news"] == sorted(token("dev", k) for k in ("kiosk-1", "kiosk-2"))
    assert_converged(world)
    assert_projects_kept_apart(world)


def test_03_b_merged_after_a_is_stale_then_replanned_approved_and_applied(world):
    sim = world.sim
    runs = sim.merge(world.b["number"])
    sim.run_until_idle()
    prod = leg(runs, "apply (prod)")
    assert prod.result == "success", explain(sim, [prod])
    assert prod.steps["apply"]["outputs"]["exitcode"] == "5", explain(sim, [prod])
    assert prod.steps["replan"]["outputs"]["pending"] == "true"
    # B changed nothing of dev's: its dev plan is stale too (the state moved), and main needs nothing in dev.
    dev = leg(runs, "apply (dev)")
    assert dev.result == "success" and dev.steps["replan"]["outputs"].get("pending") is None, explain(sim, [dev])
    waiting = sim.waiting_for_approval()
    assert [l.environment for l in waiting] == ["fcmctl-prod-approval"], waiting
    said = comment(sim, world.b["number"], "<!-- fcmctl:apply:prod -->")["body"]
    assert "waits for approval" in said and prod.steps["replan"]["outputs"]["digest"] in said
    assert "needs approval" in prod.summary
    assert token("prod", "kiosk-4") not in world.emulator.subscriptions("prod").get("news", []), "applied before approval"

    sim.approve("fcmctl-prod-approval")
    sim.run_until_idle()
    approved = leg(runs, "apply approved plan (prod)")
    assert approved.result == "success", explain(sim, [approved])
    assert approved.steps["replan"]["outputs"]["sha"] == sim.repo.head() == prod.steps["replan"]["outputs"]["sha"]
    assert approved.steps["replan"]["outputs"]["digest"] == prod.steps["replan"]["outputs"]["digest"]
    assert "applied after approval" in comment(sim, world.b["number"], "<!-- fcmctl:apply:prod -->")["body"]
    assert token("prod", "kiosk-4") in world.emulator.subscriptions("prod")["news"]
    sim.approved.clear()
    assert_converged(world)
    assert_projects_kept_apart(world)


def test_04_three_quick_merges_lose_nothing(world):
    sim = world.sim
    pulls = []
    for name, files in (
        ("topic-alerts", {"fcm/base/topics.yaml": topics(["announcements", "news", "alerts"])}),
        ("dev-kiosk-3", {"fcm/dev/devices.yaml": devices("dev", ["kiosk-1", "kiosk-2", "kiosk-3"])}),
        ("prod-kiosk-5", {"fcm/prod/devices.yaml": devices("prod", ["kiosk-1", "kiosk-2", "kiosk-3", "kiosk-4", "kiosk-5"])}),
    ):
        pull, _ = sim.open_pull_request(name, files, name)
        pulls.append(pull)
    sim.run_until_idle()
    # Merged one after the other before the first apply starts: the second run waits behind the first, and
    # the third replaces it (GitHub keeps one pending run per concurrency group).
    first, second, third = (sim.merge(p["number"]) for p in pulls)
    sim.run_until_idle()
    for environment in PROJECTS:
        assert leg(first, f"apply ({environment})").result == "success", explain(sim, legs_of(first))
        assert leg(second, f"apply ({environment})").result == "cancelled"
        assert leg(third, f"apply ({environment})").result == "success", explain(sim, legs_of(third))
    # The first run applied its reviewed plan; the third found its own stale (main holds the second merge
    # too), planned main's HEAD and waits for approval where main has changes.
    for environment in PROJECTS:
        assert leg(first, f"apply ({environment})").steps["apply"]["outputs"]["exitcode"] == "0", explain(sim, legs_of(first))
        assert leg(second, f"apply ({environment})").log == [], "the second run was cancelled while pending, before any step"
        newest = leg(third, f"apply ({environment})")
        assert newest.steps["apply"]["outputs"]["exitcode"] == "5", explain(sim, [newest])
        assert newest.steps["replan"]["outputs"]["sha"] == sim.repo.head(), "the re-plan is of main's HEAD"
    assert {l.environment for l in sim.waiting_for_approval()} == {"fcmctl-dev-approval", "fcmctl-prod-approval"}, explain(sim, legs_of(third))
    approve_all(world)
    assert all(l.result == "success" for l in legs_of(third)), explain(sim, legs_of(third))
    subscriptions = world.emulator.subscriptions("dev")
    assert token("dev", "kiosk-3") in subscriptions["alerts"] and token("dev", "kiosk-3") in subscriptions["news"], "the cancelled run's merge was lost"
    assert token("prod", "kiosk-5") in world.emulator.subscriptions("prod")["alerts"]
    sim.approved.clear()
    assert_converged(world)
    assert_projects_kept_apart(world)


def test_05_a_failing_plan_posts_its_error(world):
    sim = world.sim
    broken = "topics:\n  broken:\n    members: [no-such-device]\n"
    pull, runs = sim.open_pull_request("broken", {"fcm/prod/broken.yaml": broken}, "A broken prod manifest")
    sim.run_until_idle()
    assert leg(runs, "plan (dev)").result == "success", explain(sim, legs_of(runs))
    prod = leg(runs, "plan (prod)")
    assert prod.result == "failure"
    said = comment(sim, pull["number"], "<!-- fcmctl:plan:prod -->")["body"]
    assert "failed" in said and "no-such-device" in said, said
    assert "Planned for" not in said, "the error replaces any plan, so no digest of this pull request is left to apply"
    assert any(kind == "error" for kind, _ in prod.annotations)
    # Fixed: the same comment now carries the plan.
    runs = sim.push_to_pull_request(pull["number"], {"fcm/prod/broken.yaml": "topics:\n  maintenance:\n    members: [kiosk-1]\n"},
                                    "Name a device that exists")
    sim.run_until_idle()
    assert leg(runs, "plan (prod)").result == "success", explain(sim, legs_of(runs))
    fixed = comment(sim, pull["number"], "<!-- fcmctl:plan:prod -->")
    assert fixed["edits"] >= 1, "the error comment was updated in place"
    assert "Planned for" in fixed["body"]
    assert_projects_kept_apart(world, expect=("prod",))  # dev has nothing to read: --refresh=changed


def test_06_nightly_drift_opens_then_updates_then_closes_an_issue(world):
    sim = world.sim
    assert "fcmctl-drift" not in sim.github.labels
    # Out of band, someone unsubscribes a prod kiosk.
    world.emulator.request("DELETE", f"/v1/projects/{PROJECTS['prod']}/registrations/{token('prod', 'kiosk-1')}/topicSubscriptions/news")
    runs = sim.schedule("drift-nightly.yml")
    sim.run_until_idle()
    assert leg(runs, "drift (dev)").result == "success", explain(sim, legs_of(runs))
    prod = leg(runs, "drift (prod)")
    assert prod.result == "failure" and prod.steps["drift"]["outputs"]["exitcode"] == "2", explain(sim, [prod])
    assert "fcmctl-drift" in sim.github.labels, "the drift job creates its label"
    issues = sim.github.open_issues("fcmctl-drift")
    assert len(issues) == 1 and issues[0]["body"].startswith("<!-- fcmctl:drift:prod -->"), issues
    first_body = issues[0]["body"]

    # The next night: more drift; the same issue is updated, no second one.
    world.emulator.request("DELETE", f"/v1/projects/{PROJECTS['prod']}/registrations/{token('prod', 'kiosk-2')}/topicSubscriptions/news")
    runs = sim.schedule("drift-nightly.yml")
    sim.run_until_idle()
    issues_now = sim.github.open_issues("fcmctl-drift")
    assert [i["number"] for i in issues_now] == [issues[0]["number"]]
    assert issues_now[0]["body"] != first_body
    # Repaired out of band: the next night closes it.
    for kiosk in ("kiosk-1", "kiosk-2"):
        world.emulator.request("POST", f"/v1/projects/{PROJECTS['prod']}/registrations/{token('prod', kiosk)}/topicSubscriptions?topicName=news", {})
    runs = sim.schedule("drift-nightly.yml")
    sim.run_until_idle()
    assert all(l.result == "success" for l in legs_of(runs)), explain(sim, legs_of(runs))
    assert sim.github.open_issues("fcmctl-drift") == []
    assert sim.github.unknown == [] and sim.github.refused == []
    assert_projects_kept_apart(world)


def test_07_a_failed_drift_run_is_reported_in_the_issue(world):
    sim = world.sim
    # FCM refuses to say anything about one prod kiosk (403, not retried): drift cannot finish its reading.
    world.emulator.request("PUT", "/emulator/v1/faults", {"failing_registrations": {token("prod", "kiosk-3"): 403}})
    try:
        runs = sim.schedule("drift-nightly.yml")
        sim.run_until_idle()
    finally:
        world.emulator.request("PUT", "/emulator/v1/faults", {"failing_registrations": {}})
    prod = leg(runs, "drift (prod)")
    assert prod.result == "failure" and prod.steps["drift"]["outputs"]["exitcode"] not in ("0", "2"), explain(sim, [prod])
    issues = sim.github.open_issues("fcmctl-drift")
    assert len(issues) == 1 and issues[0]["body"].startswith("<!-- fcmctl:drift:prod -->"), issues
    assert "fcmctl drift failed in `prod`" in issues[0]["body"], issues[0]["body"]
    assert leg(runs, "drift (dev)").result == "success"
    assert_projects_kept_apart(world)


# --- least privilege (issue 31, point 3) --------------------------------------------------------------------------


def probe(world, workflow, job, steps, deliver):
    """Runs JOB of WORKFLOW as the workflow defines it (its trigger, permissions, environment, matrix, env and
    sign-in: every step up to and including the setup action), with the steps after that replaced by STEPS:
    what code in that job could do with its credentials. DELIVER(file) delivers the event that runs the copy;
    it returns the runs, whose legs are returned once they finished."""
    sim = world.sim
    document = copy.deepcopy(sim.workflows[workflow])
    spec = document["jobs"][job]
    kept = []
    for step in spec["steps"]:
        kept.append(step)
        if step.get("uses", "").startswith("fcmctl/fcmctl"):
            break
    assert any("google-github-actions/auth" in s.get("uses", "") for s in kept), f"{workflow} job {job} does not sign in"
    spec["steps"] = kept + steps
    document["jobs"] = {job: spec}
    name = f"probe-{workflow}"
    sim.workflows[name] = document
    try:
        runs = deliver(name)
        sim.run_until_idle()
    finally:
        del sim.workflows[name]
    found = legs_of(runs)
    assert {l.matrix.get("environment") for l in found} == set(PROJECTS), found
    return found


def attempts(one):
    """{name: (exit code, output)} of the probe steps' `attempt NAME COMMAND…` lines."""
    text = "\n".join(one.log)
    found = {}
    for match in re.finditer(r"<<< (\S+) exit (\d+)\n(.*?)>>>", text, re.S):
        found[match.group(1)] = (int(match.group(2)), match.group(3))
    return found


# `attempt NAME COMMAND…`: runs COMMAND, keeps its stdout in $RUNNER_TEMP/NAME.out, and logs its exit code and
# stderr between markers that attempts() reads back.
ATTEMPT = """attempt() {
  local name=$1; shift
  set +e; "$@" > "$RUNNER_TEMP/$name.out" 2> "$RUNNER_TEMP/$name.err"; local code=$?; set -e
  echo "<<< $name exit $code"; cat "$RUNNER_TEMP/$name.err"; echo ">>>"
}
"""


def test_08_the_pull_request_identity_cannot_write_the_state(world):
    """The plan job's own sign-in, with code a branch could put there: every write to the state prefix is
    refused by the bucket (fcmctl exits 1 naming storage.objects.create and the role that grants it), reads work,
    and the bucket is as it was."""
    sim = world.sim
    before = {name: world.gcs.get(BUCKET, name)[1] for name in world.gcs.names(BUCKET)}
    refused_before = len(world.storage.writes(allowed=False))
    script = ATTEMPT + """
MANIFESTS=(-f fcm/base -f "fcm/$ENVIRONMENT")
attempt pull fcmctl state pull "${MANIFESTS[@]}" --state "$FCMCTL_STATE"
jq '.serial += 1' "$RUNNER_TEMP/pull.out" > next.json
attempt push fcmctl state push "${MANIFESTS[@]}" --state "$FCMCTL_STATE" next.json
attempt push-unlocked fcmctl state push "${MANIFESTS[@]}" --state "$FCMCTL_STATE" --lock=false --force next.json
attempt apply fcmctl apply "${MANIFESTS[@]}" --state "$FCMCTL_STATE" --auto-approve
attempt gcloud-state gcloud storage cp next.json "$FCMCTL_STATE/state.json"
attempt gcloud-plan gcloud storage cp next.json "$FCMCTL_STATE/plans/$HEAD_SHA.plan"
attempt gcloud-read gcloud storage cp "$FCMCTL_STATE/state.json" read.json
"""
    # The pull request is opened without running the example workflows (only="none"); the probe runs on its push.
    pull, _ = sim.open_pull_request("probe-planner", {"fcm/base/topics.yaml": topics(["announcements", "news", "alerts", "probe"])},
                                    "A change a branch would apply", only="none")
    legs = probe(world, "plan-on-pr.yml", "plan", [{"name": "Try to write the state", "run": script}],
                 lambda name: sim.push_to_pull_request(pull["number"], {"fcm/base/probe.txt": "x\n"}, "probe", only=name))
    for one in legs:
        environment = one.matrix["environment"]
        tried = attempts(one)
        assert one.result == "success" and set(tried) == {"pull", "push", "push-unlocked", "apply", "gcloud-state", "gcloud-plan",
                                                          "gcloud-read"}, explain(sim, [one])
        assert tried["pull"][0] == 0 and tried["gcloud-read"][0] == 0, tried
        for name in ("push", "push-unlocked", "apply"):
            code, text = tried[name]
            assert code == 1, (name, tried[name])
            assert "storage.objects.create" in text and "roles/storage.objectUser" in text, (name, text)
            assert PLANNERS[environment] in text, (name, "GCS names the caller", text)
        for name in ("gcloud-state", "gcloud-plan"):
            code, text = tried[name]
            assert code == 1 and "HTTPError 403" in text and "storage.objects.create" in text, (name, text)
        # Signed in as the planner; every write it tried was refused, none reached fake-gcs-server.
        assert {d["account"] for d in one.identity if d["kind"] == "impersonate"} == {PLANNERS[environment]}
        assert all(e["caller"] == PLANNERS[environment] for e in one.storage)
        assert not [e for e in one.storage if e["allowed"] and e["permission"] in WRITES], one.storage
        assert len([e for e in one.storage if not e["allowed"]]) >= 5, one.storage
        # FCM saw no change: apply stopped at the lock, before any request that mutates.
        assert not [r for r in one.requests if r.get("method") in ("POST", "DELETE", "PATCH", "PUT")
                    and r.get("path", "").startswith("/v1/projects/") and ":generateAccessToken" not in r.get("path", "")], one.requests
    assert {name: world.gcs.get(BUCKET, name)[1] for name in world.gcs.names(BUCKET)} == before, "the bucket changed"
    assert len(world.storage.writes(allowed=False)) >= refused_before + 10
    world.checked = len(sim.legs)  # the probe's refusals are its point; the next scenarios are checked afresh
    assert_converged(world)


def test_09_the_apply_identity_may_write_the_state(world):
    """The apply job's own sign-in (on main, in fcmctl-ENV-apply), the same write: accepted."""
    sim = world.sim
    script = ATTEMPT + """
MANIFESTS=(-f fcm/base -f "fcm/$ENVIRONMENT")
attempt pull fcmctl state pull "${MANIFESTS[@]}" --state "$FCMCTL_STATE"
jq '.serial += 1' "$RUNNER_TEMP/pull.out" > next.json
attempt push fcmctl state push "${MANIFESTS[@]}" --state "$FCMCTL_STATE" next.json
"""
    serials = {e: json.loads(world.gcs.get(BUCKET, f"fcmctl/{e}/state.json")[0])["serial"] for e in PROJECTS}
    legs = probe(world, "apply-on-merge.yml", "apply", [{"name": "Write the state", "run": script}], lambda name: sim.dispatch(name))
    for one in legs:
        environment = one.matrix["environment"]
        tried = attempts(one)
        assert one.result == "success" and tried["pull"][0] == 0 and tried["push"][0] == 0, explain(sim, [one])
        assert one.environment == f"fcmctl-{environment}-apply"
        assert {d["account"] for d in one.identity if d["kind"] == "impersonate"} == {APPLIERS[environment]}
        written = [e for e in one.storage if e["permission"] == "storage.objects.create"]
        assert written and all(e["allowed"] and e["caller"] == APPLIERS[environment] for e in written), one.storage
        assert json.loads(world.gcs.get(BUCKET, f"fcmctl/{environment}/state.json")[0])["serial"] == serials[environment] + 1
    assert_converged(world)
    assert_projects_kept_apart(world, expect=())


def test_10_fcm_refuses_the_pull_request_identity_every_change(world):
    """With fcm-emulator's IAM: the planner (FCM viewer) may read its own project and change nothing, even with
    a state of its own (no bucket in the way); it may not read the other environment's project."""
    sim = world.sim
    before = {e: world.emulator.subscriptions(e) for e in PROJECTS}
    script = ATTEMPT + """
attempt plan fcmctl plan -f fcm/base -f "fcm/$ENVIRONMENT" --state "$FCMCTL_STATE" --detailed-exitcode
attempt apply fcmctl apply -f fcm/base -f "fcm/$ENVIRONMENT" --state "$RUNNER_TEMP/own.json" --auto-approve
other=$([ "$ENVIRONMENT" = dev ] && echo prod || echo dev)
attempt other fcmctl plan -f fcm/base -f "fcm/$other" --state "$RUNNER_TEMP/other.json"
"""
    pull, _ = sim.open_pull_request("probe-fcm", {"fcm/base/topics.yaml": topics(["announcements", "news", "alerts", "probe-fcm"])},
                                    "A new topic", only="none")
    legs = probe(world, "plan-on-pr.yml", "plan", [{"name": "Try to change FCM", "run": script}],
                 lambda name: sim.push_to_pull_request(pull["number"], {"fcm/base/probe.txt": "y\n"}, "probe", only=name))
    for one in legs:
        tried = attempts(one)
        assert tried["plan"][0] == 2, tried["plan"]  # reading works: the plan shows the new topic
        code, text = tried["apply"]
        assert code == 1 and "cloudmessaging.topicSubscriptions.create" in text, text
        code, text = tried["other"]
        assert code == 1 and "cloudmessaging.topicSubscriptions" in text, text
    assert {e: world.emulator.subscriptions(e) for e in PROJECTS} == before, "FCM changed"
    world.checked = len(sim.legs)


def broken_copy(tmp_path, edit):
    """The example workflows copied to TMP_PATH, plan-on-pr.yml's plan job edited by EDIT(job)."""
    folder = tmp_path / "broken"
    shutil.copytree(WORKFLOWS, folder)
    path = folder / "plan-on-pr.yml"
    document = yaml.safe_load(path.read_text())
    edit(document["jobs"]["plan"])
    path.write_text(yaml.safe_dump(document, sort_keys=False))
    return str(folder)


def give_the_applier(job):
    for step in job["steps"]:
        if "google-github-actions/auth" in step.get("uses", ""):
            step["with"]["service_account"] = "${{ matrix.applier }}"


def give_the_applier_and_its_environment(job):
    give_the_applier(job)
    job["environment"] = "fcmctl-${{ matrix.environment }}-apply"


@pytest.mark.parametrize("edit, refused_by", [(give_the_applier, "workload identity"), (give_the_applier_and_its_environment, "environment")],
                         ids=["applier", "applier-in-its-environment"])
def test_11_a_pull_request_job_given_the_applier_is_refused(world, tmp_path, edit, refused_by):
    """Code on a branch can edit the plan workflow (a pull_request run uses the branch's copy): the guard is not
    the YAML but Google's binding and GitHub's Environment. The copy that signs in as the applier gets no token
    (roles/iam.workloadIdentityUser admits the applier on refs/heads/main in its Environments only); the copy
    that also names the applier's Environment is stopped by that Environment's deployment branches before it
    starts. Either way: no bucket request, no FCM request, and the plan comment says it failed."""
    sim = world.sim
    folder = broken_copy(tmp_path, edit)
    with open(os.path.join(folder, "plan-on-pr.yml")) as handle:
        document = yaml.safe_load(handle)
    pull, _ = sim.open_pull_request(f"probe-{refused_by.replace(' ', '-')}", {"fcm/base/topics.yaml": topics(["announcements", "news", "alerts", "x"])},
                                    "A branch that signs in as the applier", only="none")
    name = "broken-plan-on-pr.yml"
    sim.workflows[name] = document
    try:
        runs = sim.push_to_pull_request(pull["number"], {"fcm/base/probe.txt": refused_by}, "probe", only=name)
        sim.run_until_idle()
    finally:
        del sim.workflows[name]
    for one in legs_of(runs):
        environment = one.matrix["environment"]
        assert one.result == "failure", explain(sim, [one])
        assert one.storage == [], one.storage
        assert not [r for r in one.requests if r.get("path", "").startswith(f"/v1/projects/{PROJECTS[environment]}")], one.requests
        if refused_by == "workload identity":
            tried = {(d["account"], d["allowed"]) for d in one.identity if d["kind"] == "impersonate"}
            assert tried == {(APPLIERS[environment], False)}, one.identity
            assert "iam.serviceAccounts.getAccessToken" in "\n".join(one.log), explain(sim, [one])
            said = comment(sim, pull["number"], f"<!-- fcmctl:plan:{environment} -->")["body"]
            assert "failed" in said and "Planned for" not in said, said
        else:
            assert one.log == [f'--- (GitHub) Branch "{pull["head"]["ref"]}" is not allowed to deploy to fcmctl-{environment}-apply '
                               "due to environment protection rules."], one.log
            assert one.identity == []
    world.checked = len(sim.legs)


def test_12_a_saved_plan_that_expired_is_planned_again(world):
    """The saved plan is an artifact, kept 30 days: merged after it expired, the reviewed plan cannot be downloaded,
    and main is planned again and applied after approval, as for a stale plan."""
    sim = world.sim
    pull, runs = sim.open_pull_request("prod-kiosk-6", {"fcm/prod/devices.yaml": devices("prod", ["kiosk-1", "kiosk-2", "kiosk-3", "kiosk-4",
                                                                                                   "kiosk-5", "kiosk-6"])}, "Add a prod kiosk")
    sim.run_until_idle()
    assert all(l.result == "success" for l in legs_of(runs)), explain(sim, legs_of(runs))
    plan_run = runs[0]
    del plan_run.artifacts["fcmctl-saved-plan-prod"]  # expired (retention-days)
    merged = sim.merge(pull["number"])
    sim.run_until_idle()
    prod = leg(merged, "apply (prod)")
    assert prod.result == "success", explain(sim, [prod])
    assert prod.steps["find"]["outputs"]["reviewed"] == "true" and prod.steps["download"]["outcome"] == "failure", explain(sim, [prod])
    assert prod.steps["apply"]["outcome"] == "skipped" and prod.steps["replan"]["outputs"]["pending"] == "true"
    assert f"the saved plan of run {plan_run.id} could not be downloaded" in prod.summary
    assert leg(merged, "apply (dev)").steps["download"]["outcome"] == "success"
    assert [l.environment for l in sim.waiting_for_approval()] == ["fcmctl-prod-approval"]
    approve_all(world)
    assert leg(merged, "apply approved plan (prod)").result == "success", explain(sim, legs_of(merged))
    assert token("prod", "kiosk-6") in world.emulator.subscriptions("prod")["news"]
    sim.approved.clear()
    assert_converged(world)
    assert_projects_kept_apart(world, expect=("prod",))


def test_the_readmes_set_up_what_the_simulation_enforces():
    """The gcloud and gh commands of README.md and examples/github-actions/README.md grant what the simulation's
    IAM stand-ins enforce: the provider's mapping and condition, each account's workloadIdentityUser members
    (the docs' templates, filled in, are the simulation's members), the roles, the prefix condition, the
    Environments and the FCMCTL_ENVIRONMENTS list."""
    examples = open(os.path.join(ROOT, "examples/github-actions/README.md")).read()
    for text in (examples, open(os.path.join(ROOT, "README.md")).read()):
        assert "--attribute-mapping=\"google.subject=assertion.sub,attribute.repository=assertion.repository," \
               "attribute.sub_ref=assertion.sub + ':ref:' + assertion.ref\"" in text
        assert "--attribute-condition=\"assertion.repository == '$REPO'\"" in text
        planner = re.search(r'add-iam-policy-binding "\$PLANNER".*?--member="([^"]+)"', text, re.S).group(1)
        applier = re.search(r'add-iam-policy-binding "\$APPLIER".*?--member="([^"]+)"', text, re.S).group(1)
        for e in PROJECTS:
            def fill(template, kind=""):
                return (template.replace("$POOL", POOL).replace("$REPO", REPOSITORY).replace("$ENV", e).replace("$KIND", kind))
            assert workload_identity_users()[PLANNERS[e]] == [fill(planner)]
            assert workload_identity_users()[APPLIERS[e]] == [fill(applier, kind) for kind in ("apply", "approval")]
        for account, role in (("PLANNER", "roles/firebasecloudmessaging.viewer"), ("APPLIER", "roles/firebasecloudmessaging.admin"),
                              ("PLANNER", "roles/storage.objectViewer"), ("APPLIER", "roles/storage.objectUser")):
            assert re.search(rf'--member="serviceAccount:\${account}" \\\n\s+--role={re.escape(role)}', text), (account, role)
        assert "fcmctl-plan@$PROJECT.iam.gserviceaccount.com" in text and "fcmctl-apply@$PROJECT.iam.gserviceaccount.com" in text
    assert 'resource.name.startsWith("projects/_/buckets/$BUCKET/objects/fcmctl/$ENV/")' in examples
    assert 'api.getAttribute("storage.googleapis.com/objectListPrefix", "").startsWith("fcmctl/$ENV/")' in examples
    assert bucket_bindings() == [(account, role, f"fcmctl/{e}/") for e in PROJECTS for account, role in (
        (PLANNERS[e], "roles/storage.objectViewer"), (APPLIERS[e], "roles/storage.objectUser"))]
    listed = json.loads(re.search(r"```json\n(.*?)```", examples, re.S).group(1))
    assert listed == json.loads(ENVIRONMENTS), "the README's FCMCTL_ENVIRONMENTS is not the simulation's"
    for name, spec in GITHUB_ENVIRONMENTS.items():
        kind = name.rsplit("-", 1)[1]
        assert f'gh api -X PUT "repos/$REPO/environments/fcmctl-$ENV-{kind}"' in examples
        assert spec["branches"] == ["main"] and spec.get("reviewers", False) == (kind == "approval")
    assert '/deployment-branch-policies" -f name=main -f type=branch' in examples
