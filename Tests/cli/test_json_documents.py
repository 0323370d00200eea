"""JSON from plan, show, apply and drift validates against the committed schemas, on a real emulator, for
a scenario that produces every plan action and every drift category."""
import json

import pytest

from fcmharness import Emulator, run, schema_validator

PROJECT, SENDER = "views-demo", "4242"
A, B, C, D, E, F = (f"{name}-token:APA91b{name * 24}" for name in "ABCDEF")


def manifest(version):
    groups = {"g-keep": [A, B], "g-del": [C]} if version == 1 else {"g-keep": [A, B, E], "g-new": [D]}
    topics = {
        "t-add": ("additive", [A, B, F] + ([D] if version == 2 else [])),
        "t-auth": ("authoritative", [A]),
        "t-obs": ("observe", [A]),
    }
    if version == 1:
        topics["t-old"] = ("additive", [C])
    lines = [f"project: {{id: {PROJECT}, senderId: \"{SENDER}\"}}", "groups:"]
    for name, members in groups.items():
        lines += [f"  {name}:", "    members:"] + [f"      - \"{m}\"" for m in members]
    lines.append("topics:")
    for name, (ownership, members) in topics.items():
        lines += [f"  {name}:", f"    ownership: {ownership}", "    members:"] + [f"      - \"{m}\"" for m in members]
    return "\n".join(lines) + "\n"


@pytest.fixture
def emulator():
    emulator = Emulator()
    yield emulator
    emulator.stop()


def document(result, schema):
    assert result.stdout.strip(), result.stderr
    parsed = json.loads(result.stdout)
    errors = sorted(schema_validator(schema).iter_errors(parsed), key=str)
    assert not errors, "\n".join(str(e) for e in errors[:5])
    return parsed


def test_every_action_and_every_drift_category_validates(emulator, tmp_path):
    emulator.register(A, B, C, D, E, F)
    path = tmp_path / "fcmctl.yaml"
    state = str(tmp_path / "state.json")
    common = ["-f", str(path), "--state", state]
    path.write_text(manifest(1))
    first = run(["apply", "--auto-approve", "--format", "json"] + common, emulator)
    assert first.returncode == 0, first.stderr
    applied = document(first, "apply.schema.json")
    assert applied["result"]["succeeded"] and applied["result"]["operations_done"] > 0

    # Out of band: fcmctl's subscription removed, an undeclared one added on the authoritative topic, a
    # group deleted, a registration uninstalled.
    emulator.unsubscribe(PROJECT, A, "t-add")
    emulator.subscribe(PROJECT, B, "t-auth")
    emulator.delete_group(SENDER, "g-keep", [A, B])
    emulator.uninstall(F)
    path.write_text(manifest(2))

    drift = run(["drift", "--detailed-exitcode", "--format", "json"] + common, emulator)
    assert drift.returncode == 2, drift.stderr
    report = document(drift, "drift.schema.json")
    counts = {category["id"]: category["count"] for category in report["categories"]}
    assert all(count > 0 for count in counts.values()), counts
    addresses = {c["id"]: [o["address"] for o in c["objects"]] for c in report["categories"]}
    assert addresses["managed_removed"] == ["topic/t-add"]
    assert addresses["undeclared_subscriptions"] == ["topic/t-auth"]
    assert addresses["observe_differs"] == ["topic/t-obs"]
    assert addresses["dead_registrations"] == ["topic/t-add"]
    assert "group/g-keep" in addresses["groups_changed"] and "group/g-new" in addresses["groups_changed"]
    assert sorted(addresses["undeclared_records"]) == ["group/g-del", "topic/t-old"]
    assert addresses["declared_missing"] == ["topic/t-add"]
    # Registrations are redacted in JSON unless --show-tokens.
    assert A not in drift.stdout and F not in drift.stdout

    saved = str(tmp_path / "plan.bin")
    plan = run(["plan", "--format", "json", "-out", saved] + common, emulator)
    assert plan.returncode == 0, plan.stderr
    planned = document(plan, "plan.schema.json")
    actions = {change["address"]: change["action"] for change in planned["changes"]}
    assert actions["group/g-new"] == "create" and actions["group/g-del"] == "delete" and actions["group/g-keep"] == "create"
    assert actions["topic/t-add"] == "update" and actions["topic/t-old"] == "update"
    assert {"create", "update", "delete"} <= set(actions.values())
    notes = {change["address"]: change["notes"] for change in planned["changes"]}
    assert notes["group/g-del"] == ["removing the last member deletes the group and its notification key"]
    assert planned["refresh"]["mode"] == "all" and planned["saved_to"] == saved

    shown = run(["show", saved, "--format", "json"])
    assert shown.returncode == 0, shown.stderr
    show_document = document(shown, "plan.schema.json")
    assert show_document["kind"] == "saved_plan"
    # The same changes, but for where the manifest declares them and why they remove: a saved plan carries
    # neither locations nor causes (the pull request's comment, made with the plan, has them).
    assert show_document["changes"] == [{k: v for k, v in c.items() if k not in ("location", "removed_causes")} for c in planned["changes"]]
    assert [c["cause"] for c in next(c for c in planned["changes"] if c["address"] == "group/g-del")["removed_causes"]] == ["object_removed"]
    # The digest a reviewer approves is the file's own, in the plan document and in show's.
    with open(saved) as handle:
        assert planned["digest"] == show_document["saved_plan"]["digest"] == json.load(handle)["digest"]
    assert planned["digest"].startswith("sha256:")

    json_copy = tmp_path / "apply.json"
    apply = run(["apply", saved, "--auto-approve", "--json-into", str(json_copy)] + common[2:], emulator)
    assert apply.returncode == 0, apply.stderr + apply.stdout
    assert "Apply complete" in apply.stdout  # the terminal got text …
    report = json.loads(json_copy.read_text())  # … and the file the JSON document
    errors = list(schema_validator("apply.schema.json").iter_errors(report))
    assert not errors, errors[:3]
    assert {item["address"] for item in report["completed"]} >= {"group/g-new", "group/g-del", "topic/t-add"}

    clean = run(["drift", "--detailed-exitcode", "--format", "json"] + common, emulator)
    after = document(clean, "drift.schema.json")
    remaining = {c["id"] for c in after["categories"] if c["count"]}
    # What apply cannot fix by design stays: the observe-only topic and the dead registration.
    assert remaining == {"observe_differs", "dead_registrations"}, remaining
    assert clean.returncode == 2


def test_show_tokens_prints_registrations_in_json(emulator, tmp_path):
    path = tmp_path / "fcmctl.yaml"
    path.write_text(manifest(1))
    plan = run(["plan", "--format", "json", "--show-tokens", "-f", str(path), "--state", str(tmp_path / "s.json")], emulator)
    assert A in plan.stdout
    hidden = run(["plan", "--format", "json", "-f", str(path), "--state", str(tmp_path / "s.json")], emulator)
    assert A not in hidden.stdout and json.loads(hidden.stdout)["has_changes"]


NAMED = f"""project: {{id: {PROJECT}, senderId: "{SENDER}"}}
devices:
  kiosk-a: {{token: "{A}"}}
  kiosk-c: {{token: "{C}"}}
groups:
  family:
    members: [kiosk-a, "{B}"]
topics:
  news:
    members: [kiosk-a, "{B}", kiosk-c]
"""


def test_every_document_kind_passes_check_jsonschema_offline(emulator, tmp_path):
    """check-jsonschema (the CLI people run in CI) on plan, saved plan, apply, drift and error documents,
    with every proxy pointing at a closed port: the schemas resolve their $refs from the checkout alone."""
    from fcmharness import check_jsonschema

    emulator.register(A, B, C)
    path = tmp_path / "fcmctl.yaml"
    path.write_text(NAMED)
    common = ["-f", str(path), "--state", str(tmp_path / "state.json")]
    documents = {}

    saved = str(tmp_path / "plan.bin")
    plan = run(["plan", "--format", "json", "-out", saved] + common, emulator)
    documents["plan"] = json.loads(plan.stdout)
    documents["saved_plan"] = json.loads(run(["show", saved, "--format", "json"]).stdout)
    applied = run(["apply", saved, "--auto-approve", "--format", "json"], emulator)
    assert applied.returncode == 0, applied.stderr
    documents["apply"] = json.loads(applied.stdout)
    documents["drift"] = json.loads(run(["drift", "--format", "json"] + common, emulator).stdout)
    broken = tmp_path / "broken.yaml"
    broken.write_text(f'project: {{id: {PROJECT}, senderId: "{SENDER}"}}\ntopics:\n  "bad topic": ["{A}"]\n')
    failed = run(["plan", "--format", "json", "-f", str(broken), "--state", str(tmp_path / "other.json")], emulator)
    assert failed.returncode == 1
    documents["error"] = json.loads(failed.stdout)

    schema = {"plan": "plan", "saved_plan": "plan", "apply": "apply", "drift": "drift", "error": "error"}
    for kind, document in documents.items():
        assert document["kind"] == kind
        checked = check_jsonschema(f"{schema[kind]}.schema.json", document, tmp_path)
        assert checked.returncode == 0, f"{kind}: {checked.stdout}{checked.stderr}"
        assert "ok -- validation done" in checked.stdout
        assert not schema_validator(f"{schema[kind]}.schema.json").is_valid(dict(document, format_version="0")), kind

    # Not vacuous: a document the schema forbids fails the same way.
    wrong = check_jsonschema("error.schema.json", dict(documents["error"], exit_code=0), tmp_path)
    assert wrong.returncode == 1 and "exit_code" in wrong.stdout

    # The project, device names aligned with registrations, and where each object is declared.
    assert all(documents[kind]["project"] == PROJECT for kind in ("plan", "saved_plan", "apply", "drift"))
    changes = {change["address"]: change for change in documents["plan"]["changes"]}
    news = changes["topic/news"]
    names = dict(zip(news["added"], news["added_devices"]))
    assert sorted(map(str, names.values())) == ["None", "kiosk-a", "kiosk-c"] and len(news["added_devices"]) == len(news["added"])
    assert news["location"]["file"] == str(path) and news["location"]["line"] == 9
    assert changes["group/family"]["location"]["line"] == 6
    assert documents["error"]["diagnostics"][0]["line"] == 3 and documents["error"]["project"] is None
