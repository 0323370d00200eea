"""The pipeline simulator's own rules (Tests/cli/pipelinesim), on small workflows made here: expressions as
GitHub documents them, one running and one pending leg per concurrency group, the job token's permissions,
`bash -e` versus `shell: bash`, matrix include and outputs, and refusing what it does not model."""
import os
import textwrap

import pytest

from pipelinesim.expressions import Unsupported, condition, evaluate, interpolate
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
                    endpoints={"fcm": "http://127.0.0.1:9", "storage": "http://127.0.0.1:9", "oidc": ("http://127.0.0.1:9/?x=1", "t")},
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
