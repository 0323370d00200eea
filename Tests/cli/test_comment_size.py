"""fcmctl's Markdown goes into a comment or an issue whole, sized by fcmctl's own `--max-chars`, never cut by
bytes (issue 30).

The three example workflows run in the pipeline simulator (Tests/cli/pipelinesim, as Tests/cli/test_pipeline.py
runs them) on a pull request that declares 3,000 topics for dev, each subscribing a shard of 30 of dev's 600
devices, five of them also removing subscriptions FCM holds but the manifest does not declare:

  1. plan-on-pr.yml plans it and comments;
  2. merged after FCM moved, apply-on-merge.yml finds the reviewed plan stale, plans main again and comments
     with that plan (waiting for an approval that is never given here);
  3. drift-nightly.yml, dev never applied, opens an issue with every declared subscription missing.

Each Markdown is far over the budget, so fcmctl shows what fits and counts the rest on its last line. The
devices are named in Hindi and Thai, some with a flag: the Markdown is more bytes than characters (a byte cut
such as `head -c 60000` ends inside a section and loses the last line), and more code points than grapheme
clusters (GitHub counts code points: a budget in grapheme clusters posts a comment GitHub refuses). Each body
posted must be:

  - the workflow's own lines and then fcmctl's Markdown (the artifact, or the step summary), whole;
  - within the workflow's MAX_CHARS in characters as GitHub counts them, and within GitHub's 65,536;
  - balanced: as many `<details>` as `</details>`, and cmark-gfm (GitHub's renderer) renders it into HTML in
    which every <details> is closed, before the omission line;
  - ending with fcmctl's omission line ("**N more objects / M more changes not shown** …"), whose N and M
    agree with the JSON document and the sections shown.

`FCMCTL_PIPELINE_WORKFLOWS` runs it on edited copies of the workflows, as for test_pipeline.py."""
import html.parser
import json
import os
import re
import shutil
import subprocess
import time

import pytest
import yaml

from test_pipeline import PROJECTS, WORKFLOWS, comment, explain, leg, project, start_world

GITHUB_LIMIT = 65_536  # "Body is too long (maximum is 65536 characters)"
TOPICS = 3_000
SHARDS = 20  # topic t subscribes shard t % 20: 30 devices
DEVICES = 600
REMOVING = {topic: 4 for topic in range(5)}  # topic index -> undeclared subscriptions FCM holds (20 < MAX_REMOVALS)
# Device names as a team in India or Thailand would write them: Devanagari and Thai grapheme clusters of 2 or 3
# code points (a vowel sign or tone mark on a consonant), a flag of two regional indicators.
NAMES = ["रसोई-टैबलेट", "🇮🇳-काउंटर-कियोस्क", "ห้องครัว-แท็บเล็ต", "🇹🇭-ป้ายหน้าร้าน"]


def device_name(i):
    return f"{NAMES[i % len(NAMES)]}-{i:04d}"


def device_token(i):
    return f"dev-{i:04d}:APA91b{'z' * 24}"


def shard_of_topic(topic):
    return topic % SHARDS


def topic_name(topic):
    return f"store-{topic:04d}"


def dev_devices():
    """600 devices, 30 in each of 20 shards."""
    lines = ["devices:"]
    for i in range(DEVICES):
        lines.append(f'  "{device_name(i)}": {{ token: "{device_token(i)}", labels: {{ role: kiosk, shard: "s{i % SHARDS}" }} }}')
    return "\n".join(lines) + "\n"


def dev_topics():
    lines = ["topics:"]
    for topic in range(TOPICS):
        lines += [f"  {topic_name(topic)}:", "    ownership: authoritative",
                  f'    members: {{ selector: {{ shard: "s{shard_of_topic(topic)}" }} }}']
    return "\n".join(lines) + "\n"


def undeclared(topic):
    """Devices FCM has subscribed to TOPIC that the manifest does not declare there (the next shard's first ones)."""
    shard = (shard_of_topic(topic) + 1) % SHARDS
    return [i for i in range(DEVICES) if i % SHARDS == shard][:REMOVING[topic]]


BASE = "topics:\n  announcements:\n    ownership: authoritative\n    members: { selector: { role: kiosk } }\n"
PROD_DEVICES = 'devices:\n  kiosk-1: { token: "prod-kiosk-1:APA91bxxxxxxxxxxxxxxxxxxxxxxxx", labels: { role: kiosk } }\n'


def workflow_env(file, job, name):
    with open(os.path.join(WORKFLOWS, file)) as handle:
        return yaml.safe_load(handle)["jobs"][job]["env"][name]


class DetailsBalance(html.parser.HTMLParser):
    """Walks the rendered HTML: every <details> closed, none closed before it opened, and the paragraphs outside
    every section (their text, and how many sections had closed before each)."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.depth, self.opened, self.closed, self.unbalanced = 0, 0, 0, False
        self.paragraphs = []  # (sections closed before it, text) of each <p> outside every <details>
        self.capturing = False

    def handle_starttag(self, tag, attrs):
        if tag == "details":
            self.depth += 1
            self.opened += 1
        elif tag == "p" and self.depth == 0:
            self.paragraphs.append([self.closed, ""])
            self.capturing = True

    def handle_endtag(self, tag):
        if tag == "details":
            self.depth -= 1
            self.closed += 1
            self.unbalanced = self.unbalanced or self.depth < 0
        elif tag == "p":
            self.capturing = False

    def handle_data(self, data):
        if self.capturing:
            self.paragraphs[-1][1] += data


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    if shutil.which("jq") is None:
        pytest.skip("jq is not installed (the workflows use it, as GitHub's runners have it)")
    assert shutil.which("cmark-gfm"), "cmark-gfm is not installed: scripts/install-deps.sh --test installs it"
    # The same world as test_pipeline.py's: the planner and the applier, Google's IAM in front of the stand-ins.
    started_world = start_world(str(tmp_path_factory.mktemp("comment-size")))
    sim, emulator = started_world.sim, started_world.emulator
    sim.repo.initial({
        "fcm/base/topics.yaml": BASE,
        "fcm/dev/project.yaml": project("dev"),
        "fcm/dev/devices.yaml": dev_devices(),
        "fcm/prod/project.yaml": project("prod"),
        "fcm/prod/devices.yaml": PROD_DEVICES,
    })
    def subscribe(device, topic):
        """A subscription made out of band, as an app makes it."""
        emulator.request(
            "POST", f"/v1/projects/{PROJECTS['dev']}/registrations/{device_token(device)}/topicSubscriptions?topicName={topic}", {})

    # Some devices were subscribed to topics the pull request declares for other devices: its authoritative
    # topics remove them.
    for topic in REMOVING:
        for device in undeclared(topic):
            subscribe(device, topic_name(topic))
    started = time.monotonic()
    pull, runs = sim.open_pull_request("stores", {"fcm/dev/topics.yaml": dev_topics()}, "Every store's topic")
    sim.run_until_idle()
    world = type("World", (), {})()
    world.sim, world.pull, world.runs, world.seconds, world.subscribe = sim, pull, runs, time.monotonic() - started, subscribe
    yield world
    started_world.stop()


OMISSION = (r"\*\*(?P<objects>\d+) more objects? / (?P<changes>\d+) more changes? not shown\*\* "
            r"(?:\(\d+ of them with deletions or removals, named at the top as far as room allowed\) )?"
            r"\(the (?P<budget>\d+)-character budget\)\. Run `fcmctl (?:plan|drift)` locally, or read (?:the JSON plan|its JSON), for all of them\.")


def assert_whole_within_budget_and_balanced(body, markdown, header, budget, sizes, section):
    """BODY (a comment or an issue body) is HEADER then MARKDOWN (fcmctl's output), whole; within BUDGET and
    GitHub's limit; balanced, as written and as cmark-gfm renders it; its last line fcmctl's omission line,
    whose counts agree with SIZES (every object's key -> its changes) less the sections shown (SECTION: a
    regular expression whose groups make the key of a section's object). What it found, for the report."""
    assert markdown, "fcmctl wrote no Markdown"
    # The Markdown is over the budget: fcmctl left objects out, and it is more bytes than the budget (so a byte
    # cut at the budget, the workflows' old `head -c 60000`, would cut it).
    assert len(markdown.encode()) > budget, "the test's Markdown must be more bytes than the budget, or a byte cut cuts nothing"

    # Whole: the workflow's own lines, then fcmctl's Markdown, every character of it.
    assert body.endswith(markdown), "not fcmctl's Markdown whole (cut?); it ends with:\n" + body[-600:]
    assert body[:len(body) - len(markdown)] == header, body[:len(body) - len(markdown)]

    # Within the budget as GitHub counts (Python's len() counts code points, as GitHub's "characters" do).
    assert len(markdown) <= budget, f"fcmctl's Markdown is {len(markdown)} characters, over --max-chars {budget}"
    assert len(markdown) > budget * 0.9, f"the budget should be used, not wasted: {len(markdown)}"
    assert len(body) <= GITHUB_LIMIT, f"{len(body)} characters: GitHub refuses it"

    # Balanced as written, and in GitHub's rendering.
    shown = [match if isinstance(match, str) else tuple(match) for match in re.findall(section, markdown)]
    assert len(shown) > 10, shown
    assert body.count("<details") == body.count("</details>") == len(shown)
    rendered = subprocess.run(["cmark-gfm", "--unsafe", "-e", "table"], input=body, capture_output=True, text=True, check=True).stdout
    balance = DetailsBalance()
    balance.feed(rendered)
    balance.close()
    assert not balance.unbalanced and balance.depth == 0, "a </details> without its <details>, or one left open"
    assert balance.opened == balance.closed == len(shown)
    assert "<table>" in rendered

    # The last line is fcmctl's omission line; its counts are what the sections do not show.
    last = body.rstrip("\n").split("\n")[-1]
    omitted = re.fullmatch(OMISSION, last)
    assert omitted, f"the last line is not fcmctl's omission line: {last!r}"
    assert int(omitted["budget"]) == budget
    assert int(omitted["objects"]) == len(sizes) - len(shown) > 0
    assert int(omitted["changes"]) == sum(sizes.values()) - sum(sizes[key] for key in shown)
    # Rendered, it is the last paragraph, after every section has closed.
    closed_before, text = balance.paragraphs[-1]
    assert closed_before == len(shown) and text.startswith(f"{omitted['objects']} more objects / {omitted['changes']} more changes not shown")
    return shown, omitted


def report(what, body, markdown, shown, omitted, seconds):
    print(f"\n{what}: {len(body):,} characters ({len(body.encode()):,} bytes), of which fcmctl's Markdown {len(markdown):,} "
          f"characters; {len(shown)} sections, {omitted['objects']} objects not shown; the workflow ran {seconds:.1f} s")


PLAN_SECTION = r"<details(?: open)?><summary><code>[-+~] (\S+)</code>"


def test_the_plan_comment_is_fcmctls_markdown_whole_within_budget_and_balanced(world):
    sim = world.sim
    dev = leg(world.runs, "plan (dev)")
    assert dev.result == "success", explain(sim, [dev])
    assert dev.steps["plan"]["outputs"]["changes"] == "true"
    found = comment(sim, world.pull["number"], "<!-- fcmctl:plan:dev -->")
    assert found, "no dev plan comment:\n" + explain(sim, [dev])
    files = world.runs[0].artifacts["fcmctl-plan-dev"]["files"]
    markdown, document = files["plan.md"].decode(), json.loads(files["plan.json"])
    assert len(document["changes"]) == TOPICS + 1
    header = (f"<!-- fcmctl:plan:dev -->\n### fcmctl plan: `dev`\n\nPlanned for `{world.pull['head']['sha']}` with digest "
              f"`{dev.steps['plan']['outputs']['digest']}`. On merge, exactly this plan is applied, or, if\n"
              "anything moved since, main is planned again and applied after approval.\n\n")
    sizes = {change["address"]: change["counts"]["add"] + change["counts"]["remove"] for change in document["changes"]}
    world.plan_sizes = sizes
    shown, omitted = assert_whole_within_budget_and_balanced(
        found["body"], markdown, header, int(workflow_env("plan-on-pr.yml", "plan", "MAX_CHARS")), sizes, PLAN_SECTION)
    # The removals come first: the banner names them and their sections open the list.
    assert "> [!CAUTION]" in markdown and "#### Deletions and removals" in markdown
    assert shown[:len(REMOVING)] == [f"topic/{topic_name(topic)}" for topic in sorted(REMOVING)]
    report("plan comment", found["body"], markdown, shown, omitted, world.seconds)
    prod = leg(world.runs, "plan (prod)")
    assert prod.result == "success", explain(sim, [prod])


def test_the_replan_comment_after_merge_is_whole_too(world):
    """Merged after FCM moved: the reviewed plan is stale, main is planned again, and the apply comment carries
    the new plan's Markdown (which waits for approval, never given here)."""
    sim = world.sim
    # Out of band, a device is subscribed to a topic the reviewed plan subscribes it to: what the plan's
    # operations touch moved since the review, so the plan is stale (exit 5) and nothing is sent.
    world.subscribe(0, topic_name(0))
    started = time.monotonic()
    runs = sim.merge(world.pull["number"])
    sim.run_until_idle()
    seconds = time.monotonic() - started
    dev = leg(runs, "apply (dev)")
    assert dev.result == "success", explain(sim, [dev])
    assert dev.steps["apply"]["outputs"]["exitcode"] == "5" and dev.steps["replan"]["outputs"]["pending"] == "true", explain(sim, [dev])
    found = comment(sim, world.pull["number"], "<!-- fcmctl:apply:dev -->")
    assert found and "waits for approval" in found["body"], explain(sim, [dev])
    markdown = runs[0].artifacts["fcmctl-replan-dev"]["files"]["replan.md"].decode()
    run_url = f"https://github.com/acme/fleet/actions/runs/{runs[0].id}"
    header = ("<!-- fcmctl:apply:dev -->\n### fcmctl apply: `dev` waits for approval\n\n"
              "The reviewed plan could not be applied as it was (stale or missing); nothing was sent. main was planned\n"
              f"again with digest `{dev.steps['replan']['outputs']['digest']}`; [the run]({run_url}) applies it once the environment\n"
              "`fcmctl-dev-approval` is approved.\n\n")
    # The same changes as the pull request's plan (the handoff artifact has no plan JSON), less the one subscription
    # made out of band.
    sizes = dict(world.plan_sizes, **{f"topic/{topic_name(0)}": world.plan_sizes[f"topic/{topic_name(0)}"] - 1})
    shown, omitted = assert_whole_within_budget_and_balanced(
        found["body"], markdown, header, int(workflow_env("apply-on-merge.yml", "apply", "MAX_CHARS")), sizes, PLAN_SECTION)
    report("apply comment (re-plan)", found["body"], markdown, shown, omitted, seconds)
    assert [l.environment for l in sim.waiting_for_approval()] == ["fcmctl-dev-approval"]


def test_the_drift_issue_is_fcmctls_markdown_whole_too(world):
    """Nightly drift of dev, never applied: every declared subscription is missing, over the budget."""
    sim = world.sim
    started = time.monotonic()
    runs = sim.schedule("drift-nightly.yml")
    sim.run_until_idle()
    seconds = time.monotonic() - started
    dev = leg(runs, "drift (dev)")
    assert dev.steps["drift"]["outputs"]["exitcode"] == "2", explain(sim, [dev])
    issues = [i for i in sim.github.open_issues("fcmctl-drift") if i["body"].startswith("<!-- fcmctl:drift:dev -->")]
    assert len(issues) == 1, explain(sim, [dev])
    markdown = dev.summary  # the Drift step appends fcmctl's Markdown, and only it, to the step summary
    document = json.loads(runs[0].artifacts["fcmctl-drift-dev"]["files"]["drift.json"])
    run_url = f"https://github.com/acme/fleet/actions/runs/{runs[0].id}"
    header = f"<!-- fcmctl:drift:dev -->\nFCM drifted from the manifests in `dev` (last seen by [this run]({run_url})).\n\n"
    sizes = {(obj["address"], category["id"]): max(1, obj["count"]) for category in document["categories"] for obj in category["objects"]}
    shown, omitted = assert_whole_within_budget_and_balanced(
        issues[0]["body"], markdown, header, int(workflow_env("drift-nightly.yml", "drift", "MAX_CHARS")), sizes,
        r"<details><summary><code>(\S+)</code> (\w+): ")
    report("drift issue", issues[0]["body"], markdown, shown, omitted, seconds)
