"""The pipeline simulator's own rules (Tests/cli/pipelinesim), on small workflows made here: expressions as
GitHub documents them, one running and one pending leg per concurrency group, the job token's permissions,
`bash -e` versus `shell: bash`, matrix include and outputs, an Environment's deployment branches, the job's
OIDC claims, actions pinned by commit, and refusing what it does not model. And Google's side
(pipelinesim/google.py): the storage proxy's answers for each role, condition and request kind, and the
workload identity stand-in's provider checks and bindings."""
import json
import os
import textwrap
import urllib.error
import urllib.parse
import urllib.request

import pytest

from fcmharness import Emulator, FakeGCS
from pipelinesim.expressions import Unsupported, condition, evaluate, interpolate
from pipelinesim.google import StorageProxy, WorkloadIdentity, sign_jwt, unb64url
from pipelinesim.runner import Simulator

CONTEXT = {
    "matrix": {"environment": "dev"},
    "steps": {"plan": {"outputs": {"exitcode": "2", "empty": ""}, "outcome": "success"}},
    "github": {"event_name": "push", "event": {"pull_request": {"number": 7}}},
    "needs": {"list": {"outputs": {"include": '[{"environment": "prod"}]', "none": "[]"}}},
    "vars": {"BUCKET": "b"},
}


@pytest.mark.parametrize("expression, expected", [
    ("matrix.environment", "dev"),
    ("MATRIX.Environment", "dev"),  # property names are case-insensitive
    ("steps.plan.outputs.exitcode == '2'", True),
    ("steps.plan.outputs.exitcode == 2", True),  # loose: the string is coerced to a number
    ("'DEV' == matrix.environment", True),  # strings compare case-insensitively
    ("steps.plan.outputs.missing", None),
    ("steps.plan.outputs.missing == ''", True),  # null == '' (both coerce to 0)
    ("steps.plan.outputs.empty || 'fallback'", "fallback"),
    ("steps.plan.outputs.exitcode && 'yes'", "yes"),
    ("!steps.plan.outputs.empty", True),
    ("fromJSON(needs.list.outputs.include)[0].environment", "prod"),
    ("needs.list.outputs.none != '[]'", False),
    ("format('{0}-{1}', matrix.environment, github.event.pull_request.number)", "dev-7"),
    ("contains(fromJSON('[\"a\",\"b\"]'), 'B')", True),
    ("startsWith('fcmctl-dev', 'FCMCTL')", True),
    ("toJSON(matrix)", '{\n  "environment": "dev"\n}'),
    ("fromJSON('[1,2]').*", [1, 2]),
])
def test_expressions(expression, expected):
    assert evaluate(expression, CONTEXT) == expected


def test_interpolation_and_conditions():
    assert interpolate("gs://${{ vars.BUCKET }}/fcmctl/${{ matrix.environment }}", CONTEXT) == "gs://b/fcmctl/dev"
    assert interpolate("${{ fromJSON(needs.list.outputs.include) }}", CONTEXT) == [{"environment": "prod"}]
    statuses = {"success": False, "failure": True, "always": True, "cancelled": False}
    # Without a status function, success() && (…) is implied: false once a step failed.
    assert condition("steps.plan.outputs.exitcode == '2'", CONTEXT, statuses.get) is False
    assert condition("always() && steps.plan.outputs.exitcode == '2'", CONTEXT, statuses.get) is True
    assert condition("${{ failure() }}", CONTEXT, statuses.get) is True


@pytest.mark.parametrize("expression", ["hashFiles('x')", "github.event_name =~ 'x'", "unknown.context"])
def test_what_is_not_modelled_is_refused(expression):
    with pytest.raises(Unsupported):
        evaluate(expression, CONTEXT)


def simulator(tmp_path, workflow, variables=None, environments=None):
    folder = tmp_path / "workflows"
    folder.mkdir()
    (folder / "w.yml").write_text(textwrap.dedent(workflow))
    sim = Simulator(root=str(tmp_path / "sim"), workflows_dir=str(folder), repository="acme/repo", fcmctl="/bin/false",
                    endpoints={"fcm": "http://127.0.0.1:9", "storage": "http://127.0.0.1:9"},
                    variables=variables or {}, environments=environments)
    sim.repo.initial({"a.txt": "1\n"})
    return sim


def legs(runs):
    return [leg for run in runs for job in run.jobs.values() for leg in job["legs"]]


def test_one_running_one_pending_per_group(tmp_path):
    sim = simulator(tmp_path, """
        on: workflow_dispatch
        jobs:
          apply:
            runs-on: ubuntu-latest
            concurrency: {group: apply, cancel-in-progress: false}
            steps:
              - run: echo "$GITHUB_RUN_ID" >> "$RUNNER_TEMP/../../ran"
    """)
    try:
        first, second, third = (sim.dispatch("w.yml")[0] for _ in range(3))
        sim.run_until_idle()
        assert [legs([r])[0].result for r in (first, second, third)] == ["success", "cancelled", "success"]
        with open(os.path.join(sim.root, "ran")) as handle:
            assert handle.read().split() == [str(first.id), str(third.id)]
    finally:
        sim.stop()


def test_cancel_in_progress_replaces_the_running_leg(tmp_path):
    sim = simulator(tmp_path, """
        on: workflow_dispatch
        jobs:
          plan:
            runs-on: ubuntu-latest
            concurrency: {group: plan, cancel-in-progress: true}
            steps:
              - run: "true"
    """)
    try:
        first, second = (sim.dispatch("w.yml")[0] for _ in range(2))
        sim.run_until_idle()
        assert [legs([r])[0].result for r in (first, second)] == ["cancelled", "success"]
    finally:
        sim.stop()


def test_the_job_token_carries_only_the_workflow_permissions(tmp_path):
    sim = simulator(tmp_path, """
        on: workflow_dispatch
        permissions:
          contents: read
        jobs:
          comment:
            runs-on: ubuntu-latest
            steps:
              - env:
                  GH_TOKEN: ${{ github.token }}
                run: gh api "repos/$GITHUB_REPOSITORY/issues" -f title=x
    """)
    try:
        run = sim.dispatch("w.yml")[0]
        sim.run_until_idle()
        leg = legs([run])[0]
        assert leg.result == "failure"
        assert "Resource not accessible by integration (HTTP 403)" in "".join(leg.log)
        assert sim.github.refused
    finally:
        sim.stop()


def test_default_shell_has_no_pipefail_but_shell_bash_does(tmp_path):
    sim = simulator(tmp_path, """
        on: workflow_dispatch
        jobs:
          default:
            runs-on: ubuntu-latest
            steps:
              - run: false | true
          bash:
            runs-on: ubuntu-latest
            steps:
              - shell: bash
                run: false | true
    """)
    try:
        run = sim.dispatch("w.yml")[0]
        sim.run_until_idle()
        assert {leg.job_id: leg.result for leg in legs([run])} == {"default": "success", "bash": "failure"}
    finally:
        sim.stop()


def test_matrix_include_outputs_and_environment_approval(tmp_path):
    sim = simulator(tmp_path, """
        on: workflow_dispatch
        jobs:
          fan:
            runs-on: ubuntu-latest
            strategy:
              matrix:
                include:
                  - environment: dev
                  - environment: prod
            outputs:
              last: ${{ steps.o.outputs.value }}
            steps:
              - id: o
                run: echo "value=${{ matrix.environment }}" >> "$GITHUB_OUTPUT"
          gated:
            needs: fan
            runs-on: ubuntu-latest
            environment: gate-${{ needs.fan.outputs.last }}
            steps:
              - run: test "$V" = "from-the-environment"
                env:
                  V: ${{ vars.V }}
    """, variables={"V": "from-the-repository"}, environments={"gate-prod": {"reviewers": True, "vars": {"V": "from-the-environment"}}})
    try:
        run = sim.dispatch("w.yml")[0]
        sim.run_until_idle()
        assert [leg.api["name"] for leg in legs([run]) if leg.job_id == "fan"] == ["fan (dev)", "fan (prod)"]
        assert run.jobs["fan"]["outputs"] == {"last": "prod"}  # the last leg to finish wins
        assert [leg.environment for leg in sim.waiting_for_approval()] == ["gate-prod"]
        sim.approve("gate-prod")
        sim.run_until_idle()
        assert run.jobs["gated"]["result"] == "success"
        assert run.api["conclusion"] == "success"
    finally:
        sim.stop()


def test_unknown_actions_are_refused(tmp_path):
    sim = simulator(tmp_path, """
        on: workflow_dispatch
        jobs:
          x:
            runs-on: ubuntu-latest
            steps:
              - uses: actions/github-script@v7
    """)
    try:
        sim.dispatch("w.yml")
        with pytest.raises(Unsupported):
            sim.run_until_idle()
    finally:
        sim.stop()


def test_an_environment_deploys_only_from_its_branches(tmp_path):
    """GitHub checks an Environment's deployment branches against the run's branch (a pull request's head branch)
    and fails the job before it starts."""
    sim = simulator(tmp_path, """
        on: [pull_request, workflow_dispatch]
        jobs:
          deploy:
            runs-on: ubuntu-24.04
            environment: production
            steps:
              - run: echo deployed
    """, environments={"production": {"branches": ["main"]}})
    try:
        _, runs = sim.open_pull_request("feature", {"b.txt": "2\n"}, "A feature")
        sim.run_until_idle()
        refused = legs(runs)[0]
        assert refused.result == "failure"
        assert ("error", 'Branch "feature" is not allowed to deploy to production due to environment protection rules.') in refused.annotations
        assert refused.log == ['--- (GitHub) Branch "feature" is not allowed to deploy to production due to environment protection rules.']
        allowed = sim.dispatch("w.yml")
        sim.run_until_idle()
        assert legs(allowed)[0].result == "success"
    finally:
        sim.stop()


def test_the_oidc_token_carries_the_jobs_claims(tmp_path):
    """id-token: write gives the job a request URL and token; the GitHub stand-in answers with a JWT of the job's
    claims, its subject as GitHub writes it (environment, pull_request, or ref) and the audience asked for."""
    sim = simulator(tmp_path, """
        on: [pull_request, workflow_dispatch]
        permissions:
          id-token: write
        jobs:
          plain:
            runs-on: ubuntu-24.04
            steps:
              - id: t
                run: |
                  python3 - <<'PY' >> "$GITHUB_OUTPUT"
                  import json, os, urllib.request
                  request = urllib.request.Request(os.environ["ACTIONS_ID_TOKEN_REQUEST_URL"] + "&audience=https://example.test",
                                                   headers={"Authorization": "Bearer " + os.environ["ACTIONS_ID_TOKEN_REQUEST_TOKEN"]})
                  print("jwt=" + json.load(urllib.request.urlopen(request))["value"])
                  PY
          deploying:
            runs-on: ubuntu-24.04
            environment: production
            steps:
              - run: test -n "$ACTIONS_ID_TOKEN_REQUEST_TOKEN"
    """, environments={"production": {}})
    try:
        def claims(leg):
            return json.loads(unb64url(leg.steps["t"]["outputs"]["jwt"].split(".")[1]))

        _, runs = sim.open_pull_request("feature", {"b.txt": "2\n"}, "A feature")
        sim.run_until_idle()
        pull = next(l for l in legs(runs) if l.job_id == "plain")
        assert pull.result == "success", pull.log
        found = claims(pull)
        assert found["sub"] == "repo:acme/repo:pull_request" and found["ref"] == "refs/pull/1/merge"
        assert found["aud"] == "https://example.test" and found["iss"] == "https://token.actions.githubusercontent.com"
        assert found["event_name"] == "pull_request" and found["head_ref"] == "feature" and "environment" not in found
        dispatched = sim.dispatch("w.yml")
        sim.run_until_idle()
        assert claims(next(l for l in legs(dispatched) if l.job_id == "plain"))["sub"] == "repo:acme/repo:ref:refs/heads/main"
        deploying = next(l for l in legs(dispatched) if l.job_id == "deploying")
        assert sim.claims(deploying)["sub"] == "repo:acme/repo:environment:production"
        assert sim.claims(deploying)["environment"] == "production"
        # The request token dies with the job.
        assert sim.github.id_token_requests == {}
    finally:
        sim.stop()


def test_actions_pinned_by_commit_are_known_releases(tmp_path):
    sim = simulator(tmp_path, """
        on: workflow_dispatch
        jobs:
          x:
            runs-on: ubuntu-24.04
            steps:
              - uses: actions/checkout@3d3c42e5aac5ba805825da76410c181273ba90b1
              - run: test -f a.txt
    """)
    try:
        run = sim.dispatch("w.yml")[0]
        sim.run_until_idle()
        assert legs([run])[0].result == "success", legs([run])[0].log
    finally:
        sim.stop()
    (tmp_path / "unknown").mkdir()
    sim = simulator(tmp_path / "unknown", """
        on: workflow_dispatch
        jobs:
          x:
            runs-on: ubuntu-24.04
            steps:
              - uses: actions/checkout@0000000000000000000000000000000000000000
    """)
    try:
        sim.dispatch("w.yml")
        with pytest.raises(Unsupported, match="does not know as a release"):
            sim.run_until_idle()
    finally:
        sim.stop()


# --- Google's side --------------------------------------------------------------------------------------------

VIEWER, USER, CREATOR = "viewer@ci.iam.gserviceaccount.com", "user@ci.iam.gserviceaccount.com", "creator@ci.iam.gserviceaccount.com"


@pytest.fixture(scope="module")
def google():
    emulator = Emulator()
    gcs = FakeGCS()
    gcs.create_bucket("bucket-x")
    gcs.put("bucket-x", "env/state.json", b"{}")
    gcs.put("bucket-x", "other/state.json", b"{}")
    proxy = StorageProxy(gcs.base, f"{emulator.base}/tokeninfo", [
        (VIEWER, "roles/storage.objectViewer", "env/"), (USER, "roles/storage.objectUser", "env/"),
        (CREATOR, "roles/storage.objectCreator", None)]).start()

    def token_of(account):
        answer = emulator.request("POST", f"/v1/projects/-/serviceAccounts/{account}:generateAccessToken",
                                  {"scope": ["https://www.googleapis.com/auth/cloud-platform"]})
        return answer["accessToken"]

    tokens = {account: token_of(account) for account in (VIEWER, USER, CREATOR)}
    yield type("Google", (), {"emulator": emulator, "gcs": gcs, "proxy": proxy, "tokens": tokens})
    proxy.stop()
    gcs.stop()
    emulator.stop()


def call(google, account, method, path, body=None, headers=None, token=None):
    """(status, parsed answer) of one request to the storage proxy as ACCOUNT ('' for no token)."""
    all_headers = dict(headers or {})
    bearer = token if token is not None else google.tokens.get(account)
    if bearer:
        all_headers["Authorization"] = f"Bearer {bearer}"
    request = urllib.request.Request(google.proxy.base + path, data=body, method=method, headers=all_headers)
    try:
        with urllib.request.urlopen(request) as response:
            text = response.read()
            return response.status, (json.loads(text) if text and text[:1] in b"{[" else text)
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def media(name):
    return f"/upload/storage/v1/b/bucket-x/o?uploadType=media&name={urllib.parse.quote(name, safe='')}"


def obj(name, suffix=""):
    return f"/storage/v1/b/bucket-x/o/{urllib.parse.quote(name, safe='')}{suffix}"


@pytest.mark.parametrize("method, path, body, permission", [
    ("POST", media("env/state.json"), b"x", "storage.objects.create"),
    ("POST", media("env/new.json"), b"x", "storage.objects.create"),
    ("DELETE", obj("env/state.json"), None, "storage.objects.delete"),
    ("PATCH", obj("env/state.json"), b"{}", "storage.objects.update"),
    ("POST", obj("env/state.json", "/copyTo/b/bucket-x/o/env%2Fcopy.json"), b"{}", "storage.objects.create"),
    ("POST", obj("env/state.json", "/rewriteTo/b/bucket-x/o/env%2Fcopy.json"), b"{}", "storage.objects.create"),
    ("POST", obj("env/joined.json", "/compose"), json.dumps({"sourceObjects": [{"name": "env/state.json"}]}).encode(), "storage.objects.create"),
    ("GET", "/storage/v1/b/bucket-x", None, "storage.buckets.get"),
    ("GET", "/storage/v1/b/bucket-x/iam", None, "storage.buckets.getIamPolicy"),
])
def test_the_viewer_may_change_nothing(google, method, path, body, permission):
    status, answer = call(google, VIEWER, method, path, body, {"Content-Type": "application/json"})
    assert status == 403, answer
    kind = "bucket" if permission.startswith("storage.buckets") else "object"
    message = (f"{VIEWER} does not have {permission} access to the Google Cloud Storage {kind}. "
               f"Permission '{permission}' denied on resource (or it may not exist).")
    assert answer == {"error": {"code": 403, "message": message, "errors": [{"message": message, "domain": "global", "reason": "forbidden"}]}}
    assert google.gcs.get("bucket-x", "env/state.json")[0] == b"{}"
    assert "env/copy.json" not in google.gcs.names("bucket-x") and "env/joined.json" not in google.gcs.names("bucket-x")


def test_the_viewer_reads_within_its_prefix(google):
    assert call(google, VIEWER, "GET", obj("env/state.json", "?alt=media")) == (200, {})
    status, listing = call(google, VIEWER, "GET", "/storage/v1/b/bucket-x/o?prefix=env%2F")
    assert status == 200 and [i["name"] for i in listing["items"]] == ["env/state.json"]
    # Outside the condition's prefix: the other environment's objects, and a listing of the whole bucket.
    assert call(google, VIEWER, "GET", obj("other/state.json", "?alt=media"))[0] == 403
    status, answer = call(google, VIEWER, "GET", "/storage/v1/b/bucket-x/o")
    assert status == 403 and "storage.objects.list access to the Google Cloud Storage bucket" in answer["error"]["message"]


def test_the_user_writes_within_its_prefix_only(google):
    assert call(google, USER, "POST", media("env/written.json"), b"1", {"Content-Type": "application/octet-stream"})[0] == 200
    assert call(google, USER, "POST", media("env/written.json"), b"2", {"Content-Type": "application/octet-stream"})[0] == 200
    assert google.gcs.get("bucket-x", "env/written.json")[0] == b"2"
    assert call(google, USER, "DELETE", obj("env/written.json"))[0] in (200, 204)  # GCS 204, fake-gcs-server 200
    assert "env/written.json" not in google.gcs.names("bucket-x")
    status, answer = call(google, USER, "POST", media("other/state.json"), b"x", {"Content-Type": "application/octet-stream"})
    assert status == 403 and "storage.objects.create" in answer["error"]["message"]
    # A multipart upload (fcmctl's): the name is in the metadata part.
    boundary = "sep"
    body = (f"--{boundary}\r\nContent-Type: application/json\r\n\r\n" + json.dumps({"name": "other/x.json"}) +
            f"\r\n--{boundary}\r\nContent-Type: application/json\r\n\r\n{{}}\r\n--{boundary}--\r\n").encode()
    status, answer = call(google, USER, "POST", "/upload/storage/v1/b/bucket-x/o?uploadType=multipart", body,
                          {"Content-Type": f"multipart/related; boundary={boundary}"})
    assert status == 403 and "other/x.json" not in google.gcs.names("bucket-x"), answer


def test_replacing_an_object_needs_delete_too(google):
    """objectCreator creates new objects but cannot replace one: GCS checks storage.objects.delete for that."""
    assert call(google, CREATOR, "POST", media("created.json"), b"1", {"Content-Type": "application/octet-stream"})[0] == 200
    status, answer = call(google, CREATOR, "POST", media("created.json"), b"2", {"Content-Type": "application/octet-stream"})
    assert status == 403 and "storage.objects.delete" in answer["error"]["message"], answer
    assert google.gcs.get("bucket-x", "created.json")[0] == b"1"


def test_unknown_and_missing_tokens_are_401(google):
    status, answer = call(google, "", "GET", obj("env/state.json", "?alt=media"))
    assert status == 401 and answer["error"]["message"].startswith("Anonymous caller does not have storage.objects.get access")
    status, answer = call(google, "", "GET", obj("env/state.json", "?alt=media"), token="ya29.made-up")
    assert status == 401 and answer["error"]["message"] == "Invalid Credentials"


def test_what_the_proxy_does_not_model_is_refused(google):
    status, _ = call(google, USER, "POST", "/batch/storage/v1", b"x")
    assert status == 501 and google.proxy.unmodelled[-1][1] == "/batch/storage/v1"


POOL = "projects/1/locations/global/workloadIdentityPools/p"


@pytest.fixture
def identity():
    """A provider trusting acme's repositories; the viewer admits the repository acme/app, the user only its
    prod environment's subject. fcm-emulator behind it accepts the subject token the stand-in forwards."""
    emulator = Emulator("--accept-subject-token", "subject")
    gate = WorkloadIdentity(
        emulator.base, "subject", f"{POOL}/providers/gh", b"k" * 32,
        mapping=lambda c: {"google.subject": c["sub"], "attribute.repository": c["repository"]},
        condition=lambda c: c["repository"].startswith("acme/"),
        members={VIEWER: [f"principalSet://iam.googleapis.com/{POOL}/attribute.repository/acme/app"],
                 USER: [f"principal://iam.googleapis.com/{POOL}/subject/repo:acme/app:environment:prod"]}).start()
    yield gate
    gate.stop()
    emulator.stop()


def exchange(gate, claims, key=b"k" * 32, audience=None):
    jwt = sign_jwt(dict({"iss": "https://token.actions.githubusercontent.com", "aud": f"https://iam.googleapis.com/{POOL}/providers/gh"},
                        **claims), key)
    form = urllib.parse.urlencode({"grant_type": "urn:ietf:params:oauth:grant-type:token-exchange",
                                   "audience": audience or f"//iam.googleapis.com/{POOL}/providers/gh",
                                   "scope": "https://www.googleapis.com/auth/cloud-platform",
                                   "requested_token_type": "urn:ietf:params:oauth:token-type:access_token",
                                   "subject_token": jwt, "subject_token_type": "urn:ietf:params:oauth:token-type:jwt"}).encode()
    try:
        with urllib.request.urlopen(urllib.request.Request(gate.base + "/v1/token", data=form, method="POST")) as response:
            return 200, json.load(response)
    except urllib.error.HTTPError as error:
        return error.code, json.load(error)


def impersonate(gate, token, account):
    request = urllib.request.Request(f"{gate.base}/v1/projects/-/serviceAccounts/{account}:generateAccessToken", method="POST",
                                     data=json.dumps({"scope": ["https://www.googleapis.com/auth/cloud-platform"]}).encode(),
                                     headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request) as response:
            return 200, json.load(response)
    except urllib.error.HTTPError as error:
        return error.code, json.load(error)


def test_the_provider_checks_the_token_and_its_condition(identity):
    assert exchange(identity, {"sub": "x", "repository": "acme/app"}, key=b"other" * 8) == (
        400, {"error": "invalid_grant", "error_description": "Invalid JWT signature."})
    assert exchange(identity, {"sub": "x", "repository": "mallory/app"}) == (
        400, {"error": "unauthorized_client", "error_description": "The given credential is rejected by the attribute condition."})
    assert exchange(identity, {"sub": "x", "repository": "acme/app"}, audience="//iam.googleapis.com/elsewhere")[0] == 400


def test_a_service_account_admits_only_its_members(identity):
    status, answer = exchange(identity, {"sub": "repo:acme/app:pull_request", "repository": "acme/app"})
    assert status == 200, answer
    branch = answer["access_token"]
    assert impersonate(identity, branch, VIEWER)[0] == 200  # the repository's attribute
    status, refused = impersonate(identity, branch, USER)  # only the prod environment's subject
    assert status == 403 and refused["error"]["status"] == "PERMISSION_DENIED"
    assert refused["error"]["message"] == "Permission 'iam.serviceAccounts.getAccessToken' denied on resource (or it may not exist)."
    assert refused["error"]["details"][0]["metadata"] == {"permission": "iam.serviceAccounts.getAccessToken"}
    _, answer = exchange(identity, {"sub": "repo:acme/app:environment:prod", "repository": "acme/app"})
    assert impersonate(identity, answer["access_token"], USER)[0] == 200
    assert impersonate(identity, "ya29.not-federated", VIEWER)[0] == 403
