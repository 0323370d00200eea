"""The pipeline simulator (Tests/cli/pipelinesim): the three example workflows of examples/github-actions/
run from their YAML, their `run:` blocks in bash with GitHub's environment files, their `uses:` steps by
local stand-ins, against fcm-emulator (FCM, and the token services Workload Identity Federation signs in
with), fake-gcs-server (the state bucket) and a stand-in for GitHub's REST API, for a repository laid out
as examples/github-actions/README.md says: fcm/base, fcm/dev, fcm/prod, each environment its own project
and state prefix. The scenarios replay a team's weeks, in order, and share one world:

  1. two pull requests planned, each environment's plan commented and kept in the bucket
  2. A merged and applied (the reviewed plan, pinned to the comment's digest)
  3. B merged after A: its plan is stale, main is planned again, approved, applied, converged
  4. three merges in quick succession: the middle run is cancelled while pending, nothing is lost
  5. a failing plan posts its error; fixed, the comment becomes the plan
  6. nightly drift opens an issue (creating its label), updates it the next night, closes it when clean
  7. a drift run that fails is reported in the environment's issue
and after every scenario: dev's jobs sent FCM requests for dev's project only (and prod's for prod's), each
signed in as its own service account."""
import json
import os
import re
import shutil
import subprocess

import pytest

from fcmharness import EMULATOR, FCMCTL, ROOT, FakeGCS
from pipelinesim.runner import Simulator

# FCMCTL_PIPELINE_WORKFLOWS runs the scenarios on edited copies (to see a mistake caught).
WORKFLOWS = os.environ.get("FCMCTL_PIPELINE_WORKFLOWS", os.path.join(ROOT, "examples/github-actions"))
SUBJECT = "eyJhbGciOiJSUzI1NiJ9.github-oidc.sig"
REQUEST_TOKEN = "runner-oidc-request-token"
BUCKET = "acme-fcm-state"
PROJECTS = {"dev": "fleet-dev", "prod": "fleet-prod"}
SENDERS = {"dev": "111111111111", "prod": "222222222222"}
ACCOUNTS = {"dev": "fcmctl-dev@acme-ci.iam.gserviceaccount.com", "prod": "fcmctl-prod@acme-ci.iam.gserviceaccount.com"}
PROVIDER = "projects/123456/locations/global/workloadIdentityPools/github/providers/acme"


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
    """fcm-emulator with the request log in a file, accepting the runner's OIDC token for Workload Identity
    Federation, and auto-registering (every environment's made-up tokens exist, in the project that first uses them).
    Each environment's service account lives in the CI project and holds FCM admin on its environment's project
    only, as IAM grants it: the emulator refuses it anywhere else."""

    def __init__(self, folder):
        self.log = os.path.join(folder, "requests.jsonl")
        grants = [flag for environment in PROJECTS
                  for flag in ("--iam", f"{ACCOUNTS[environment]}=roles/firebasecloudmessaging.admin@{PROJECTS[environment]}")]
        self.process = subprocess.Popen(
            [EMULATOR, "--host", "127.0.0.1", "--port", "0", "--auto-register", "--request-log", self.log,
             "--accept-subject-token", SUBJECT, "--oidc-request-token", REQUEST_TOKEN, *grants],
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


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    if shutil.which("jq") is None:
        pytest.skip("jq is not installed (the workflows use it, as GitHub's runners have it)")
    root = str(tmp_path_factory.mktemp("pipeline"))
    emulator = Emulator(root)
    gcs = FakeGCS()
    gcs.create_bucket(BUCKET)
    sim = Simulator(
        root=root, workflows_dir=WORKFLOWS, repository="acme/fleet", fcmctl=FCMCTL,
        endpoints={"fcm": emulator.base, "storage": gcs.base,
                   "oidc": (f"{emulator.base}/emulator/v1/oidc-token?api-version=2.0", REQUEST_TOKEN)},
        variables={"FCMCTL_STATE_BUCKET": BUCKET, "GCP_WORKLOAD_IDENTITY_PROVIDER": PROVIDER,
                   "FCMCTL_DEV_SERVICE_ACCOUNT": ACCOUNTS["dev"], "FCMCTL_PROD_SERVICE_ACCOUNT": ACCOUNTS["prod"]},
        environments={"fcmctl-dev-approval": {"reviewers": True}, "fcmctl-prod-approval": {"reviewers": True}},
        request_log=emulator.log)
    sim.repo.initial({
        "README.md": "fleet\n",
        "fcm/base/topics.yaml": topics(["announcements"]),
        "fcm/dev/project.yaml": project("dev"),
        "fcm/dev/devices.yaml": devices("dev", ["kiosk-1", "kiosk-2"]),
        "fcm/prod/project.yaml": project("prod"),
        "fcm/prod/devices.yaml": devices("prod", ["kiosk-1", "kiosk-2", "kiosk-3"]),
    })
    world = type("World", (), {})()
    world.sim, world.emulator, world.gcs, world.root = sim, emulator, gcs, root
    world.checked = 0
    yield world
    sim.stop()
    emulator.stop()
    gcs.stop()


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


def assert_projects_kept_apart(world, expect=tuple(PROJECTS)):
    """Every FCM request of an environment's job names that environment's project; its token was obtained by
    impersonating that environment's service account. Jobs without an environment sent no FCM request."""
    seen = {environment: 0 for environment in PROJECTS}
    for one in world.sim.legs[world.checked:]:
        environment = one.matrix.get("environment")
        paths = [entry.get("path", "") for entry in one.requests]
        if environment and any(p.startswith("/v1/projects/" + PROJECTS[environment]) for p in paths):
            seen[environment] += 1
            assert any(f"/serviceAccounts/{ACCOUNTS[environment]}:generateAccessToken" in p for p in paths), (one, "FCM reached without the sign-in")
        for entry in one.requests:
            path = entry.get("path", "")
            if path.startswith("/v1/projects/-/serviceAccounts/"):
                assert environment and f"/serviceAccounts/{ACCOUNTS[environment]}:" in path, (one, path)
            elif path.startswith("/v1/projects/"):
                assert environment, (one, path)
                assert path.startswith(f"/v1/projects/{PROJECTS[environment]}/"), (one, path)
            elif path.startswith("/fcm/") or path.startswith("/iid/"):
                raise AssertionError(f"{one}: a legacy request {path} (the manifests use the v1 API only)")
    assert all(seen[environment] for environment in expect), f"the check saw no FCM request of some environment: {seen}"
    world.checked = len(world.sim.legs)
    # No artifact of any run holds a registration in full, and none holds a saved plan.
    for each in world.sim.runs:
        for name, artifact in each.artifacts.items():
            for file, data in artifact["files"].items():
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
            # The saved plan is in the bucket, next to the state; the artifact is redacted.
            saved, _ = world.gcs.get(BUCKET, f"fcmctl/{environment}/plans/{pull['head']['sha']}.plan")
            assert json.loads(saved)["digest"] == digest
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
