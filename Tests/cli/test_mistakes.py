"""The mistakes people make, end to end: the real binary, the strict emulator (it knows only the registrations it
was told of, like FCM), and the examples/environments layout (a shared base, dev with YAML devices, prod with a
CSV export). Each case first applies both environments as a team would have, with an app-made subscription
beside fcmctl's, then makes one mistake and runs what CI runs: `validate`, the pull request's `plan --format
markdown`, and the merge job's `apply --auto-approve --max-removals 0`. Each mistake ends one of two ways:

- refused: red before any request that changes FCM, naming the place (file:line:col, or the object) and what to
  do (a did-you-mean where one exists);
- shown: the plan's first screen (the caution banner, before the summary table) says what is removed and why,
  and the merge job refuses it while showing it whole.

Either way every subscription that worked before is still in FCM. docs/reliability.md ("Mistakes people make")
lists the cases and what each gets."""
import json
import os
import re
import shutil

import pytest

from fcmharness import ROOT, Emulator, check_jsonschema, run

PROD_CSV = "prod/devices.csv"
PROD_TOKENS = {
    "prod-kiosk-nyc-1": "pK1nyc0001:APA91bProdKioskNycToken00000001",
    "prod-kiosk-nyc-2": "pK1nyc0002:APA91bProdKioskNycToken00000002",
    "prod-kiosk-lon-1": "pK1lon0001:APA91bProdKioskLonToken00000001",
}
DEV_TOKEN = "dK1nyc0dev:APA91bDevKioskNycToken0000000001"
DEV_FID = "dT4bLeT0dEv0fIdX0000Aa"
MUTATING = ("topics.create", "topics.delete", "groups.mutate", "iid.batchAdd", "iid.batchRemove")


class Team:
    """examples/environments, applied in both environments against one strict emulator, plus the app's own
    `promo` subscription of one prod kiosk."""

    def __init__(self, tmp_path):
        self.tree = tmp_path / "environments"
        shutil.copytree(os.path.join(ROOT, "examples", "environments"), self.tree)
        self.emulator = Emulator("--strict-registrations")
        self.emulator.register(*PROD_TOKENS.values(), DEV_TOKEN)
        self.emulator.request("POST", "/emulator/v1/registrations", {"registrations": [{"fid": DEV_FID}]})
        for environment in ("dev", "prod"):
            applied = run(["apply", "--auto-approve", "-f", self.path(environment)], self.emulator)
            assert applied.returncode == 0, applied.stdout + applied.stderr
        self.emulator.subscribe("acme-prod", PROD_TOKENS["prod-kiosk-nyc-1"], "promo")
        self.before = self.subscriptions()
        assert self.before[PROD_TOKENS["prod-kiosk-nyc-1"]] == {"industry-tech", "weather-nyc", "promo"}
        self.seen = self.last_request()

    def path(self, relative):
        return str(self.tree / relative)

    def read(self, relative):
        return (self.tree / relative).read_text()

    def write(self, relative, text):
        (self.tree / relative).write_text(text)

    def edit(self, relative, old, new, count=1):
        text = self.read(relative)
        assert old in text, (relative, old)
        self.write(relative, text.replace(old, new, count))

    def subscriptions(self):
        found = {}
        for registration in [*PROD_TOKENS.values(), DEV_TOKEN, DEV_FID]:
            entry = self.emulator.request("GET", f"/emulator/v1/registrations/{registration}")
            found[registration] = {topic["name"] for topic in entry["topics"]}
        return found

    def last_request(self):
        return self.emulator.request("GET", "/emulator/v1/requests")["last_seq"]

    def requests_since(self, seq):
        return [r for r in self.emulator.request("GET", "/emulator/v1/requests")["requests"] if r["seq"] > seq]

    def mutations_since(self, seq):
        return [r for r in self.requests_since(seq) if r["endpoint"] in MUTATING]

    def stop(self):
        self.emulator.stop()


@pytest.fixture
def team(tmp_path):
    team = Team(tmp_path)
    yield team
    team.stop()


def place(relative):
    """`…/RELATIVE:LINE:COL: error:` for a file of the copied tree, as fcmctl prints it (a base's file as
    reached through the environment's include, `prod/../base/topics.yaml`)."""
    return re.compile(r"/" + re.escape(relative) + r":\d+:\d+: error: ")


def check_refused(team, environment, *expected, place_in=None, validate=True, plan_code=1):
    """Red before any request that changes FCM, with the place and what to do; the working subscriptions stay."""
    directory = team.path(environment)
    outputs = []
    if validate:
        checked = run(["validate", "-f", directory])
        assert checked.returncode == 1, checked.stdout + checked.stderr
        outputs.append(checked.stderr)
    seq = team.last_request()
    planned = run(["plan", "-f", directory, "--format", "markdown"], team.emulator)
    assert planned.returncode == plan_code, planned.stdout + planned.stderr
    assert "<!-- fcmctl:" in planned.stdout, "the comment is replaced, not left stale"
    outputs.append(planned.stderr)
    applied = run(["apply", "--auto-approve", "-f", directory], team.emulator)
    assert applied.returncode == plan_code, applied.stdout + applied.stderr
    outputs.append(applied.stderr)
    assert team.mutations_since(seq) == []
    for output in outputs:
        for text in expected:
            assert text in output, f"{text!r} not in:\n{output}"
        if place_in:
            assert place(place_in).search(output), output
    assert team.subscriptions() == team.before
    return planned


def check_shown(team, environment, *causes, removed):
    """The pull request's comment leads with what goes and why; the merge job, with a removal limit, refuses it
    and still shows it whole; the working subscriptions stay."""
    directory = team.path(environment)
    seq = team.last_request()
    planned = run(["plan", "-f", directory, "--format", "markdown", "--detailed-exitcode"], team.emulator)
    assert planned.returncode == 2, planned.stdout + planned.stderr
    comment = planned.stdout
    first_screen = comment[: comment.index("| Action |")]
    assert "[!CAUTION]" in first_screen and "**Why:**" in first_screen, comment
    for cause in causes:
        assert cause in first_screen, f"{cause!r} not in the first screen:\n{first_screen}"
    for device in removed:
        assert device in first_screen, f"{device} not named first:\n{first_screen}"
    events = team.tree / "events.jsonl"
    document = json.loads(run(["plan", "-f", directory, "--format", "json", "--events", str(events)], team.emulator).stdout)
    kinds = {c["cause"] for change in document["changes"] for c in change.get("removed_causes", []) if c}
    assert kinds, document
    # The event stream says the same, per object: removals counted by cause.
    removals = [e for e in map(json.loads, events.read_text().splitlines()) if e["event"] == "removals"]
    assert {kind for e in removals for kind in e["causes"]} == kinds, removals
    checked = check_jsonschema("plan.schema.json", document, team.tree)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    merge = run(["apply", "--auto-approve", "--max-removals", "0", "-f", directory, "--format", "markdown"], team.emulator)
    assert merge.returncode == 1, merge.stdout + merge.stderr
    assert "This plan is refused" in merge.stdout and "more than --max-removals 0" in merge.stderr
    for device in removed:
        assert device in merge.stdout
    assert team.mutations_since(seq) == []
    assert team.subscriptions() == team.before
    return comment


# --- typos in labels, columns, selectors, device names, topic names, targets and project ids ---------------


def test_a_renamed_label_column_is_refused_at_the_selector(team):
    team.edit(PROD_CSV, "labels.role", "labels.rol")
    check_refused(team, "prod", "no device has the label 'role' (did you mean 'rol'?)", "allowEmpty", place_in="base/topics.yaml")


def test_a_label_value_misspelt_in_every_row_is_refused(team):
    team.write(PROD_CSV, team.read(PROD_CSV).replace(",kiosk,", ",kiosq,"))
    check_refused(team, "prod", "no device has role=kiosk (did you mean role=kiosq?)", place_in="base/topics.yaml")


def test_a_label_value_misspelt_in_one_row_is_shown_with_the_label(team):
    team.edit(PROD_CSV, "00000002,,kiosk,", "00000002,,kiosq,")
    comment = check_shown(team, "prod", "label role is not what the selector wants ('kiosk')", removed=["prod-kiosk-nyc-2"])
    assert "label role is 'kiosq', the selector wants 'kiosk'" in comment


def test_a_label_cell_emptied_in_one_row_is_shown_as_a_label_gone(team):
    team.edit(PROD_CSV, "00000001,,kiosk,lon", "00000001,,,lon")
    comment = check_shown(team, "prod", "has no label role (the selector wants role='kiosk')", removed=["prod-kiosk-lon-1"])
    assert "no label role, the selector wants role='kiosk'" in comment


def test_a_misspelt_selector_key_is_refused_with_the_right_one(team):
    team.edit("base/topics.yaml", "role: kiosk", "rloe: kiosk")
    check_refused(team, "prod", "no device has the label 'rloe' (did you mean 'role'?)", place_in="base/topics.yaml")


def test_a_misspelt_selector_value_is_refused_with_the_right_one(team):
    team.edit("base/topics.yaml", "role: kiosk", "role: kiosck")
    check_refused(team, "prod", "no device has role=kiosck (did you mean role=kiosk?)", place_in="base/topics.yaml")


def test_a_misspelt_column_is_refused_with_the_right_one(team):
    team.edit(PROD_CSV, "name,token,", "name,tokn,")
    check_refused(team, "prod", "unknown column 'tokn'; did you mean 'token'?", place_in=PROD_CSV)


def test_a_misspelt_device_name_is_refused_with_the_right_one(team):
    team.edit("prod/fcmctl.yaml", "- prod-kiosk-nyc-1", "- prod-kiosk-nyc-01")
    check_refused(team, "prod", "unknown device 'prod-kiosk-nyc-01'; did you mean 'prod-kiosk-nyc-1'?", place_in="prod/fcmctl.yaml")


def test_a_renamed_topic_is_shown_as_the_old_one_no_longer_declared(team):
    team.edit("base/topics.yaml", "industry-tech:", "industry-tehc:")
    check_shown(
        team, "prod", "the topic is no longer declared", removed=["prod-kiosk-nyc-1", "prod-kiosk-nyc-2", "prod-kiosk-lon-1"])


@pytest.mark.parametrize("flag", ["--target", "--exclude"])
def test_a_misspelt_target_or_exclude_is_a_usage_error(team, flag):
    seq = team.last_request()
    for command in (["plan"], ["apply", "--auto-approve"]):
        result = run([*command, "-f", team.path("prod"), flag, "topic/industry-tehc"], team.emulator)
        assert result.returncode == 64, result.stdout + result.stderr
        assert f"{flag} topic/industry-tehc names no topic" in result.stderr
        assert "(did you mean topic/industry-tech?)" in result.stderr
        assert "No changes" not in result.stdout
    assert team.mutations_since(seq) == []
    assert team.subscriptions() == team.before


def test_a_misspelt_device_in_a_subscription_target_is_a_usage_error(team):
    result = run(["plan", "-f", team.path("prod"), "--target", "topic/weather-nyc/prod-kiosk-nyc-3"], team.emulator)
    assert result.returncode == 64, result.stderr
    assert "names no device or registration of topic/weather-nyc (did you mean the device 'prod-kiosk-nyc-1'?)" in result.stderr


def test_a_misspelt_project_id_is_refused_before_fcm_is_read(team):
    team.edit("prod/fcmctl.yaml", "id: acme-prod", "id: acme-prdo")
    seq = team.last_request()
    for command in (["plan"], ["apply", "--auto-approve"]):
        result = run([*command, "-f", team.path("prod")], team.emulator)
        assert result.returncode == 1, result.stdout + result.stderr
        assert "acme-prod" in result.stderr and "acme-prdo" in result.stderr
    assert team.requests_since(seq) == [], "refused before FCM is read"
    assert team.subscriptions() == team.before


def test_a_misspelt_sender_id_is_refused_before_fcm_is_read(team):
    team.edit("prod/fcmctl.yaml", 'senderId: "111100000002"', 'senderId: "111100000020"')
    seq = team.last_request()
    result = run(["apply", "--auto-approve", "-f", team.path("prod")], team.emulator)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "111100000002" in result.stderr and "111100000020" in result.stderr
    assert team.mutations_since(seq) == []
    assert team.subscriptions() == team.before


# --- exports: empty, truncated, duplicated, missing ---------------------------------------------------------


def test_an_export_with_only_its_header_is_refused(team):
    team.write(PROD_CSV, team.read(PROD_CSV).splitlines()[0] + "\n")
    check_refused(team, "prod", "the device file devices.csv holds no devices (a header and no rows)", place_in="prod/fcmctl.yaml")


def test_an_export_of_zero_bytes_is_refused(team):
    team.write(PROD_CSV, "")
    check_refused(team, "prod", "the CSV device file is empty", place_in=PROD_CSV)


def test_an_export_cut_off_mid_row_is_refused_at_the_row(team):
    text = team.read(PROD_CSV)
    team.write(PROD_CSV, text[: text.index("pK1lon0001:APA91bProd") + 10])
    check_refused(team, "prod", "fields where the header has 5", place_in=PROD_CSV)


def test_an_export_with_its_rows_twice_is_refused(team):
    lines = team.read(PROD_CSV).splitlines()
    team.write(PROD_CSV, "\n".join(lines + lines[1:]) + "\n")
    check_refused(team, "prod", "device/prod-kiosk-nyc-1 is defined twice", place_in=PROD_CSV)


def test_a_row_copied_under_a_new_name_is_refused(team):
    row = team.read(PROD_CSV).splitlines()[1]
    team.write(PROD_CSV, team.read(PROD_CSV) + row.replace("prod-kiosk-nyc-1", "prod-kiosk-nyc-9", 1) + "\n")
    check_refused(team, "prod", "has the same registration as", place_in=PROD_CSV)


def test_a_missing_export_is_refused(team):
    os.remove(team.path(PROD_CSV))
    check_refused(team, "prod", "cannot read the device file", place_in="prod/fcmctl.yaml")


def test_a_json_lines_export_cut_off_mid_line_is_refused(team):
    team.edit("prod/fcmctl.yaml", "  - devices.csv", "  - devices.jsonl")
    lines = [json.dumps({"name": n, "token": t, "labels": {"role": "kiosk", "site": n.split("-")[2]}}) for n, t in PROD_TOKENS.items()]
    team.write("prod/devices.jsonl", "\n".join(lines)[:-25])
    check_refused(team, "prod", "this line is not a JSON object", place_in="prod/devices.jsonl")


# --- registrations: a token cut short, or with a character changed -----------------------------------------


@pytest.mark.parametrize("broken", ["pK1nyc0002:APA91bProdKioskNycToken000000", "pK1nyc0002:APA91bProdKioskNycTokem00000002"])
def test_a_damaged_token_is_refused_and_the_working_one_keeps_its_topics(team, broken):
    team.edit(PROD_CSV, PROD_TOKENS["prod-kiosk-nyc-2"], broken)
    planned = check_refused(
        team, "prod", "device prod-kiosk-nyc-2's registration", "is unknown to FCM", "check the export", place_in=PROD_CSV, validate=False)
    assert "This plan is refused" in planned.stdout and "devices.csv:3:1" in planned.stdout
    assert "No changes" not in planned.stdout and "FCM matches the manifest" not in planned.stdout
    assert team.subscriptions()[PROD_TOKENS["prod-kiosk-nyc-2"]] == {"industry-tech", "weather-nyc"}
    changed = run(["plan", "--refresh=changed", "-f", team.path("prod")], team.emulator)
    assert changed.returncode == 1 and "is unknown to FCM" in changed.stderr
    document = json.loads(run(["plan", "-f", team.path("prod"), "--format", "json"], team.emulator).stdout)
    (refusal,) = document["refusals"]
    assert refusal["kind"] == "unknown_registrations"
    assert [(p["file"].endswith("prod/devices.csv"), p["line"]) for p in refusal["problems"]] == [(True, 3)]
    checked = check_jsonschema("plan.schema.json", document, team.tree)
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_a_new_device_with_a_token_fcm_never_issued_is_refused(team):
    team.write(PROD_CSV, team.read(PROD_CSV) + "prod-kiosk-nyc-3,pK1nyc0003:APA91bProdKioskNycToken0000003,,kiosk,nyc\n")
    planned = check_refused(team, "prod", "device prod-kiosk-nyc-3's registration", "is unknown to FCM", place_in=PROD_CSV, validate=False)
    # Nothing to change, but never "FCM matches the manifest" while a declared registration is unknown to it.
    assert "FCM matches the manifest" not in planned.stdout
    assert "No changes planned, but FCM does not match the manifest: 1 declared registration is not known to FCM" in planned.stdout


# --- devices moving, files deleted, includes dropped -------------------------------------------------------


def test_a_device_moved_to_another_environment_is_shown_leaving(team):
    lines = team.read(PROD_CSV).splitlines()
    moved = next(line for line in lines if line.startswith("prod-kiosk-nyc-2,"))
    team.write(PROD_CSV, "\n".join(line for line in lines if line != moved) + "\n")
    team.edit(
        "dev/fcmctl.yaml", "devices:\n",
        f"devices:\n  prod-kiosk-nyc-2:\n    token: {PROD_TOKENS['prod-kiosk-nyc-2']}\n    labels: {{role: kiosk, site: nyc}}\n")
    check_shown(team, "prod", "the device is no longer declared", removed=["prod-kiosk-nyc-2"])
    # dev takes it in; the emulator's subscriptions are not per project, so it already holds dev's topics there.
    arriving = run(["plan", "-f", team.path("dev"), "--format", "json"], team.emulator)
    assert arriving.returncode == 0, arriving.stderr
    assert json.loads(arriving.stdout)["summary"]["subscriptions_to_remove"] == 0


def test_a_base_include_dropped_is_shown_as_its_topics_no_longer_declared(team):
    team.edit("prod/fcmctl.yaml", "include:\n  - ../base\n", "")
    check_shown(team, "prod", "the topic is no longer declared", removed=["prod-kiosk-nyc-1", "prod-kiosk-lon-1"])


def test_the_base_manifest_deleted_is_refused(team):
    os.remove(team.path("base/topics.yaml"))
    check_refused(team, "prod", "the directory holds no *.yaml or *.yml files (a base file deleted or renamed?)", place_in="prod/fcmctl.yaml")


# --- a plan over the removal limit, and an import --------------------------------------------------------


def test_a_plan_over_the_removal_limit_is_shown_whole_and_refused(team):
    team.edit("base/topics.yaml", "      selector:\n        site: nyc\n", "      include: [prod-kiosk-nyc-1]\n")
    seq = team.last_request()
    result = run(["plan", "-f", team.path("prod"), "--max-removals", "0", "--format", "markdown", "-out", team.path("p.plan")], team.emulator)
    assert result.returncode == 1, result.stdout + result.stderr
    comment = result.stdout
    assert comment.index("This plan is refused") < comment.index("This plan deletes or removes") < comment.index("| Action |")
    assert "prod-kiosk-nyc-2" in comment and "no longer listed among the members" in comment
    assert comment.count("<details") == comment.count("</details>") >= 1
    assert not os.path.exists(team.path("p.plan")), "a refused plan is not saved"
    document = json.loads(run(["plan", "-f", team.path("prod"), "--max-removals", "0", "--format", "json"], team.emulator).stdout)
    assert [r["kind"] for r in document["refusals"]] == ["max_removals"]
    removed = next(c for c in document["changes"] if c["address"] == "topic/weather-nyc")
    assert [c["cause"] for c in removed["removed_causes"]] == ["member_dropped"] and removed["removed_devices"] == ["prod-kiosk-nyc-2"]
    checked = check_jsonschema("plan.schema.json", document, team.tree)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert team.mutations_since(seq) == []
    assert team.subscriptions() == team.before


def test_an_import_beside_a_shared_base_keeps_the_apps_subscriptions(team):
    # The app subscribed one kiosk to `promo` (the baseline) and another to the base's `weather-nyc`, which its
    # site does not select: import must neither redeclare the base's topics nor make the app's subscriptions
    # fcmctl's to remove.
    team.emulator.subscribe("acme-prod", PROD_TOKENS["prod-kiosk-lon-1"], "weather-nyc")
    before = team.subscriptions()
    imported = run(["import", "subscriptions", "-f", team.path("prod"), "-o", team.path("prod/imported.yaml")], team.emulator)
    assert imported.returncode == 0, imported.stdout + imported.stderr
    assert "weather-nyc" not in team.read("prod/imported.yaml").split("Not written here")[-1].split("topics:")[-1]
    assert run(["validate", "-f", team.path("prod")]).returncode == 0
    assert run(["validate", "-f", team.path("dev")]).returncode == 0
    seq = team.last_request()
    planned = run(["plan", "--detailed-exitcode", "-f", team.path("prod")], team.emulator)
    assert planned.returncode == 0, planned.stdout + planned.stderr
    applied = run(["apply", "--auto-approve", "-f", team.path("prod")], team.emulator)
    assert applied.returncode == 0, applied.stdout + applied.stderr
    assert team.mutations_since(seq) == []
    assert team.subscriptions() == before
