"""No read before a create that does not need one (issue 35, point 4), as a pipeline sees it: the real binary
against the strict emulator, whose stats count every request by endpoint. A first `apply --auto-approve` lists
one registration's subscriptions (its answer stands for the credentials and the project), not every one; `plan`
(the pull request's check) still lists every one; a create FCM answers 409 is reported apart, in text and JSON,
and never recorded as fcmctl's; a token FCM never issued fails its own creates and nothing else; a saved plan's
apply does not re-read what it only subscribes."""
import json

import pytest

from fcmharness import Emulator, run, schema_validator

PROJECT = "unread-demo"
TOKENS = [f"k{i}:APA91bUnreadCreateToken{i:08d}" for i in range(1, 5)]


def manifest(*indexes, topics=("news", "sport")):
    lines = [f"project: {{id: {PROJECT}, senderId: \"4242\"}}", "devices:"]
    lines += [f"  k{i}: {{token: \"{TOKENS[i - 1]}\"}}" for i in indexes]
    lines.append("topics:")
    for topic in topics:
        lines.append(f"  {topic}: [{', '.join(f'k{i}' for i in indexes)}]")
    return "\n".join(lines) + "\n"


@pytest.fixture
def emulator():
    emulator = Emulator("--strict-registrations")
    emulator.register(*TOKENS)
    yield emulator
    emulator.stop()


def count(emulator, endpoint):
    return emulator.stats()["endpoints"].get(endpoint, {}).get("requests", 0)


def test_a_first_apply_lists_nothing_and_plan_lists_every_registration(emulator, tmp_path):
    path = tmp_path / "fcmctl.yaml"
    path.write_text(manifest(1, 2, 3))
    common = ["-f", str(path), "--state", str(tmp_path / "state.json")]
    applied = run(["apply", "--auto-approve"] + common, emulator)
    assert applied.returncode == 0, applied.stderr
    # One read, of the first registration: its answer stands for the credentials, the project and the sender.
    assert count(emulator, "topics.list") == 1
    assert count(emulator, "topics.create") == 6
    assert "Not reading 2 new registrations first" in applied.stderr
    planned = run(["plan", "--detailed-exitcode"] + common, emulator)
    assert planned.returncode == 0, planned.stdout + planned.stderr
    assert count(emulator, "topics.list") == 1 + 3


def test_a_subscription_someone_else_made_is_reported_apart_and_not_recorded(emulator, tmp_path):
    emulator.subscribe(PROJECT, TOKENS[1], "news")
    path = tmp_path / "fcmctl.yaml"
    path.write_text(manifest(1, 2, topics=("news",)))
    common = ["-f", str(path), "--state", str(tmp_path / "state.json")]
    applied = run(["apply", "--auto-approve", "--format", "json"] + common, emulator)
    assert applied.returncode == 0, applied.stderr
    document = json.loads(applied.stdout)
    errors = sorted(schema_validator("apply.schema.json").iter_errors(document), key=str)
    assert not errors, errors
    assert document["result"]["operations_done"] == 1
    assert document["result"]["already_subscribed"] == 1
    (outcome,) = document["outcomes"]
    assert (outcome["address"], outcome["status"], outcome["devices"]) == ("topic/news", "already_subscribed", ["k2"])
    assert outcome["reason"].startswith("was already subscribed (not fcmctl's; not recorded")
    assert TOKENS[1] not in applied.stdout + applied.stderr

    state = run(["state", "show", "topic/news"] + common, emulator)
    assert "subscriptions fcmctl created: 1\n    k1:APA…0001 (token)\n" in state.stdout, state.stdout
    assert "pending" not in state.stdout

    # Dropping the device from the manifest never removes what fcmctl did not make.
    path.write_text(manifest(1, topics=("news",)))
    applied = run(["apply", "--auto-approve"] + common, emulator)
    assert applied.returncode == 0, applied.stderr
    assert count(emulator, "topics.delete") == 0


def test_the_text_summary_counts_already_subscribed_apart(emulator, tmp_path):
    emulator.subscribe(PROJECT, TOKENS[1], "news")
    path = tmp_path / "fcmctl.yaml"
    path.write_text(manifest(1, 2, topics=("news",)))
    applied = run(["apply", "--auto-approve", "-f", str(path), "--state", str(tmp_path / "state.json")], emulator)
    assert applied.returncode == 0, applied.stderr
    assert ("Apply complete: 1 operation done in 1 request, 0 skipped (registration gone), "
            "1 already subscribed (not fcmctl's; not recorded), 0 failed.") in applied.stdout
    assert "note: topic/news: k2 (k2:APA…0002) was already subscribed (not fcmctl's; not recorded" in applied.stderr


def test_a_saved_plan_does_not_re_read_what_it_only_subscribes(emulator, tmp_path):
    path = tmp_path / "fcmctl.yaml"
    path.write_text(manifest(1))
    common = ["-f", str(path), "--state", str(tmp_path / "state.json")]
    assert run(["apply", "--auto-approve"] + common, emulator).returncode == 0
    path.write_text(manifest(1, 2, 3))
    saved = str(tmp_path / "reviewed.plan")
    assert run(["plan", "-out", saved] + common, emulator).returncode == 0
    emulator.subscribe(PROJECT, TOKENS[2], "sport")  # the app, between review and merge
    listed = count(emulator, "topics.list")
    applied = run(["apply", "--auto-approve", saved], emulator)
    assert applied.returncode == 0, applied.stderr
    assert count(emulator, "topics.list") == listed + 1  # k2, which answers for the credentials and the project
    assert "Not re-reading 1 registration the plan only subscribes" in applied.stderr
    assert "3 operations done in 3 requests, 0 skipped (registration gone), 1 already subscribed" in applied.stdout


def test_a_token_fcm_never_issued_fails_its_own_creates_and_nothing_is_removed(emulator, tmp_path):
    path = tmp_path / "fcmctl.yaml"
    path.write_text(manifest(1))
    common = ["-f", str(path), "--state", str(tmp_path / "state.json")]
    assert run(["apply", "--auto-approve"] + common, emulator).returncode == 0
    emulator.uninstall(TOKENS[3])
    path.write_text(manifest(1, 2, 4))
    planned = run(["plan"] + common, emulator)
    assert planned.returncode == 1 and "device k4's registration" in planned.stderr, planned.stderr
    applied = run(["apply", "--auto-approve", "--max-removals", "0"] + common, emulator)
    assert applied.returncode == 3, applied.stdout + applied.stderr
    assert "error: topic/news: subscribe k4 (k4:APA…0004): UNREGISTERED: FCM does not know this registration" in applied.stderr
    assert "error: topic/sport: subscribe k4 (k4:APA…0004)" in applied.stderr
    assert TOKENS[3] not in applied.stdout + applied.stderr
    assert count(emulator, "topics.delete") == 0
    assert {t["name"] for t in emulator.request("GET", f"/emulator/v1/registrations/{TOKENS[1]}")["topics"]} == {"news", "sport"}
    # The next pull request's plan still refuses it: a failed create does not make it one fcmctl knows.
    planned = run(["plan"] + common, emulator)
    assert planned.returncode == 1 and "device k4's registration" in planned.stderr, planned.stderr
