"""Issue 23 on the built binary against fcm-emulator: one shared base and a directory per environment, each its
own Firebase project. `apply -f fcm/base -f fcm/prod` once used fcm/base's state (the default next to the first
-f), which dev's apply had filled, and removed dev's subscriptions. Now a state records its project, a state of
another project is refused before any request, and several -f with different directories need their state named."""
import hashlib
import json
import os

import pytest

from fcmharness import Emulator, FakeGCS, run

BASE = """topics:
  fleet-news:
    members: {selector: {role: kiosk}}
"""


def environment(name, sender, state=None):
    lines = ["apiVersion: fcmctl/v1", f'project: {{id: acme-{name}, senderId: "{sender}"}}']
    if state:
        lines.append(f"state: {state}")
    lines.append("devices:")
    for index in (1, 2):
        lines.append(f'  {name}-kiosk-{index}: {{token: "{token(name, index)}", labels: {{role: kiosk}}}}')
    return "\n".join(lines) + "\n"


def token(name, index):
    # The request log keeps the first 6 characters of a registration: "devtok" and "prdtok" tell them apart.
    return f"{'dev' if name == 'dev' else 'prd'}tok{index}:APA91b" + "x" * 24


@pytest.fixture
def emulator():
    instance = Emulator()
    yield instance
    instance.stop()


@pytest.fixture
def fcm(tmp_path):
    """fcm/base, fcm/dev (state named on the command line) and fcm/prod (state declared in its manifest)."""
    for name in ("base", "dev", "prod"):
        (tmp_path / "fcm" / name).mkdir(parents=True)
    (tmp_path / "fcm/base/topics.yaml").write_text(BASE)
    (tmp_path / "fcm/dev/project.yaml").write_text(environment("dev", "111111111111"))
    (tmp_path / "fcm/prod/project.yaml").write_text(environment("prod", "222222222222", "{path: .fcmctl/state.json}"))
    return tmp_path / "fcm"


def requests(emulator):
    return emulator.request("GET", "/emulator/v1/requests")["requests"]


def subscribers(emulator, topic):
    registrations = emulator.request("GET", "/emulator/v1/state")["registrations"]
    return sorted(item["id"] for item in registrations if topic in item.get("topics", []))


def state(path):
    with open(path) as handle:
        return json.load(handle)


def test_prod_apply_leaves_dev_alone_and_a_dev_state_is_refused_for_prod(emulator, fcm):
    base, dev, prod = str(fcm / "base"), str(fcm / "dev"), str(fcm / "prod")
    dev_state = str(fcm / "dev/.fcmctl/state.json")
    prod_state = str(fcm / "prod/.fcmctl/state.json")

    # The trap itself: two directories, two default states, no guess.
    guessed = run(["apply", "--auto-approve", "-f", base, "-f", dev], emulator)
    assert guessed.returncode == 1, guessed.stderr
    assert f"({base}/.fcmctl/state.json, {dev}/.fcmctl/state.json)" in guessed.stderr
    assert "Pass --state PATH" in guessed.stderr and "declare `state:`" in guessed.stderr
    assert requests(emulator) == [] and not os.path.exists(fcm / "base/.fcmctl")

    applied_dev = run(["apply", "--auto-approve", "-f", base, "-f", dev, "--state", dev_state], emulator)
    assert applied_dev.returncode == 0, applied_dev.stderr
    dev_tokens = sorted(token("dev", i) for i in (1, 2))
    prod_tokens = sorted(token("prod", i) for i in (1, 2))
    assert subscribers(emulator, "fleet-news") == dev_tokens
    assert state(dev_state)["project"] == {"id": "acme-dev", "sender_id": "111111111111"}
    assert state(dev_state)["version"] == 4

    # prod: its manifest declares its state, so -f fcm/base -f fcm/prod needs no --state.
    seen = len(requests(emulator))
    applied_prod = run(["apply", "--auto-approve", "-f", base, "-f", prod], emulator)
    assert applied_prod.returncode == 0, applied_prod.stderr
    sent = requests(emulator)[seen:]
    assert sent, "prod's apply subscribed its own kiosks"
    assert all("/projects/acme-prod/" in r["path"] for r in sent), [r["path"] for r in sent]
    assert not [r for r in sent if "devtok" in r["path"]], "nothing about dev's registrations"
    assert not [r for r in sent if r["method"] == "DELETE"], "nothing removed"
    assert subscribers(emulator, "fleet-news") == sorted(dev_tokens + prod_tokens)
    # Each state holds its own project's records only.
    assert state(prod_state)["project"] == {"id": "acme-prod", "sender_id": "222222222222"}
    assert sorted(state(prod_state)["tokens"]) == prod_tokens
    assert sorted(state(dev_state)["tokens"]) == dev_tokens

    # dev's state given to prod's manifest: refused before any request, dev's state untouched.
    seen = len(requests(emulator))
    before = (fcm / "dev/.fcmctl/state.json").read_bytes()
    for command in (["plan"], ["apply", "--auto-approve"], ["drift"], ["state", "rm", "topic/fleet-news"]):
        refused = run([*command, "-f", base, "-f", prod, "--state", dev_state], emulator)
        assert refused.returncode == 1, (command, refused.stderr)
        assert (f"the state {dev_state} belongs to project acme-dev (sender 111111111111), but the manifest is for project "
                "acme-prod (sender 222222222222)") in refused.stderr, refused.stderr
        assert "Pass --state PATH with this environment's own state" in refused.stderr
    assert len(requests(emulator)) == seen, "no request of any kind"
    assert (fcm / "dev/.fcmctl/state.json").read_bytes() == before
    assert not os.path.exists(dev_state + ".lock")


def test_a_saved_prod_plan_is_refused_with_the_dev_state(emulator, fcm, tmp_path):
    base, dev, prod = str(fcm / "base"), str(fcm / "dev"), str(fcm / "prod")
    dev_state = str(fcm / "dev/.fcmctl/state.json")
    assert run(["apply", "--auto-approve", "-f", base, "-f", dev, "--state", dev_state], emulator).returncode == 0
    plan_file = str(tmp_path / "prod.plan")
    planned = run(["plan", "-out", plan_file, "-f", base, "-f", prod], emulator)
    assert planned.returncode == 0, planned.stderr
    assert json.load(open(plan_file))["project"]["id"] == "acme-prod"
    seen = len(requests(emulator))
    refused = run(["apply", "--auto-approve", plan_file, "-f", base, "-f", prod, "--state", dev_state], emulator)
    assert refused.returncode == 5, refused.stderr
    assert "the saved plan is refused: the state" in refused.stderr and "acme-dev" in refused.stderr and "acme-prod" in refused.stderr
    assert len(requests(emulator)) == seen
    applied = run(["apply", "--auto-approve", plan_file], emulator)
    assert applied.returncode == 0, applied.stderr


def version_three_state(lineage, serial, tokens, topic):
    """A state as fcmctl wrote it before states were bound to a project (format version 3, with its checksum)."""
    listed = ",\n  ".join(json.dumps(t) for t in tokens)
    body = (f'{{\n"version": 3,\n"lineage": "{lineage}",\n"serial": {serial},\n"tokens": [\n  {listed}\n],\n"fids": [],\n'
            f'"groups": {{}},\n"topics": {{\n  "{topic}": [{",".join(str(i) for i in range(len(tokens)))}]\n}}')
    return body + f',\n"checksum": "sha256:{hashlib.sha256(body.encode()).hexdigest()}"\n}}\n'


def test_an_old_state_is_read_and_bound_by_its_next_write(emulator, fcm):
    base, dev = str(fcm / "base"), str(fcm / "dev")
    dev_state = fcm / "dev/.fcmctl/state.json"
    dev_tokens = sorted(token("dev", i) for i in (1, 2))
    for registration in dev_tokens:
        emulator.subscribe("acme-dev", registration, "fleet-news")
    dev_state.parent.mkdir()
    dev_state.write_text(version_three_state("old-lineage", 4, dev_tokens, "fleet-news"))
    applied = run(["apply", "--auto-approve", "-f", base, "-f", dev, "--state", str(dev_state)], emulator)
    assert applied.returncode == 0, applied.stderr
    assert "state format version 3 will be upgraded to 4" in applied.stderr
    assert "records no project" in applied.stderr and "binds it to acme-dev (sender 111111111111)" in applied.stderr
    upgraded = state(dev_state)
    assert upgraded["version"] == 4 and upgraded["lineage"] == "old-lineage" and upgraded["serial"] == 5
    assert upgraded["project"] == {"id": "acme-dev", "sender_id": "111111111111"}
    assert sorted(upgraded["tokens"]) == dev_tokens and upgraded["topics"] == {"fleet-news": [0, 1]}
    # Bound now: prod's manifest may not use it.
    refused = run(["plan", "-f", base, "-f", str(fcm / "prod"), "--state", str(dev_state)], emulator)
    assert refused.returncode == 1 and "belongs to project acme-dev" in refused.stderr


def test_gcs_state_is_bound_and_refused_for_another_project(emulator, fcm):
    gcs = FakeGCS()
    try:
        gcs.create_bucket("fcm")
        env = {"STORAGE_EMULATOR_HOST": gcs.host}
        base, dev, prod = str(fcm / "base"), str(fcm / "dev"), str(fcm / "prod")
        applied = run(["apply", "--auto-approve", "-f", base, "-f", dev, "--state", "gs://fcm/dev"], emulator, env)
        assert applied.returncode == 0, applied.stderr
        stored, generation = gcs.get("fcm", "dev/state.json")
        assert json.loads(stored)["project"] == {"id": "acme-dev", "sender_id": "111111111111"}
        seen = len(requests(emulator))
        refused = run(["apply", "--auto-approve", "-f", base, "-f", prod, "--state", "gs://fcm/dev"], emulator, env)
        assert refused.returncode == 1, refused.stderr
        assert "the state gs://fcm/dev belongs to project acme-dev" in refused.stderr and "acme-prod" in refused.stderr
        assert len(requests(emulator)) == seen
        assert gcs.get("fcm", "dev/state.json")[1] == generation, "not rewritten"
        assert gcs.names("fcm") == ["dev/state.json", "dev/state.serial"], "no lock left behind"
    finally:
        gcs.stop()
