"""Saved plans and JSON documents, byte for byte, against golden files made before the typed-values
refactor (issue 33): a refactor of how addresses, actions and statuses travel must not change one byte a
pipeline reads. The scenarios: every example that needs no credentials, and one that makes every plan action
and every drift category. Only values that differ between runs by design are masked (the state's random
lineage, and every SHA-256 since they hash it or the scratch paths; durations, the emulator's port, scratch paths); everything else is compared as
printed. Regenerate with `FCMCTL_UPDATE_GOLDEN=1` and read the diff."""
import json
import os
import re
import shutil

import pytest

from fcmharness import ROOT, Emulator, run

GOLDEN = os.path.join(ROOT, "Tests", "cli", "golden", "outputs")
NOW = "2026-11-26T12:00:00Z"
# Keys whose values are random or timed by design, in any document.
MASKED_KEYS = {"lineage", "digest", "state", "createdAt", "created_at", "duration_seconds", "elapsed_seconds",
               "seconds", "duration", "started_at", "finished_at", "serial"}
HEX32 = re.compile(r"\b[0-9a-f]{32}\b")


def masked(value, key=None):
    if key in MASKED_KEYS and not isinstance(value, (dict, list)):
        return "<masked>"
    if isinstance(value, str) and re.fullmatch(r"(sha256:)?[0-9a-f]{64}", value):
        return "<masked>"
    if isinstance(value, dict):
        return {k: masked(v, k) for k, v in value.items()}
    if isinstance(value, list):
        return [masked(v) for v in value]
    return value


def normalised(text, scratch, emulator):
    """Masks volatile values but keeps the document's own bytes (key order, spacing, escapes) where a value is
    not masked: the JSON is re-serialised only to mask, then compared with its own byte layout checked
    separately (`layout_of`)."""
    text = text.replace(str(scratch), "<scratch>").replace(emulator.host, "<emulator>")
    return HEX32.sub("<hex32>", text)


def layout_of(text):
    """The document's bytes with every scalar replaced: catches a change of key order, indentation or
    spacing that a parsed comparison would miss."""
    return re.sub(r'"(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null', "v", text)


def check(name, text, scratch, emulator):
    document = json.loads(text)
    record = {
        "layout": layout_of(text),
        "document": masked(json.loads(normalised(json.dumps(document, ensure_ascii=False), scratch, emulator))),
    }
    rendered = json.dumps(record, indent=1, ensure_ascii=False, sort_keys=False) + "\n"
    path = os.path.join(GOLDEN, name + ".json")
    if os.environ.get("FCMCTL_UPDATE_GOLDEN"):
        os.makedirs(GOLDEN, exist_ok=True)
        with open(path, "w") as out:
            out.write(rendered)
    with open(path) as golden:
        expected = golden.read()
    assert rendered == expected, f"{path} differs: regenerate with FCMCTL_UPDATE_GOLDEN=1 and read the diff"


def check_text(name, text, scratch, emulator):
    # The emulator makes a random notification key per group.
    rendered = re.sub(r'"notification_key":"[^"]*"', '"notification_key":"<masked>"', normalised(text, scratch, emulator))
    path = os.path.join(GOLDEN, name + ".txt")
    if os.environ.get("FCMCTL_UPDATE_GOLDEN"):
        with open(path, "w") as out:
            out.write(rendered)
    with open(path) as golden:
        assert rendered == golden.read(), f"{path} differs: regenerate with FCMCTL_UPDATE_GOLDEN=1 and read the diff"


@pytest.fixture
def emulator():
    emulator = Emulator()
    yield emulator
    emulator.stop()


ENV = {"FCMCTL_NOW": NOW, "COLUMNS": "100"}


def outputs_of(example, emulator, scratch, name):
    shutil.copytree(os.path.join(ROOT, "examples", example), scratch / example)
    manifest = str(scratch / example)
    common = ["-f", manifest, "--state", str(scratch / f"{example}.state.json")]
    validate = run(["validate", "--format", "json", "-f", manifest], emulator, env=ENV)
    assert validate.returncode == 0, validate.stderr
    check(f"{name}-validate", validate.stdout, scratch, emulator)
    saved = str(scratch / f"{example}.plan")
    plan = run(["plan", "--format", "json", "-out", saved] + common, emulator, env=ENV)
    assert plan.returncode == 0, plan.stderr
    check(f"{name}-plan", plan.stdout, scratch, emulator)
    with open(saved) as file:
        check(f"{name}-saved-plan", file.read(), scratch, emulator)
    show = run(["show", "--format", "json", saved], emulator, env=ENV)
    assert show.returncode == 0, show.stderr
    check(f"{name}-show", show.stdout, scratch, emulator)
    apply = run(["apply", "--auto-approve", "--format", "json", saved], emulator, env=ENV)
    assert apply.returncode == 0, apply.stderr
    check(f"{name}-apply", apply.stdout, scratch, emulator)
    drift = run(["drift", "--format", "json"] + common, emulator, env=ENV)
    assert drift.returncode == 0, drift.stderr
    check(f"{name}-drift", drift.stdout, scratch, emulator)


@pytest.mark.parametrize("example", ["quickstart", "kiosk-fleet", "per-user-groups"])
def test_examples_outputs_are_byte_identical(emulator, tmp_path, example):
    outputs_of(example, emulator, tmp_path, example)


def test_every_action_and_drift_category_outputs_are_byte_identical(emulator, tmp_path):
    from test_json_documents import A, B, C, D, E, F, PROJECT, SENDER, manifest

    emulator.register(A, B, C, D, E, F)
    path = tmp_path / "fcmctl.yaml"
    common = ["-f", str(path), "--state", str(tmp_path / "state.json")]
    path.write_text(manifest(1))
    first = run(["apply", "--auto-approve", "--format", "json"] + common, emulator, env=ENV)
    assert first.returncode == 0, first.stderr
    check("every-action-first-apply", first.stdout, tmp_path, emulator)

    emulator.unsubscribe(PROJECT, A, "t-add")
    emulator.subscribe(PROJECT, B, "t-auth")
    emulator.delete_group(SENDER, "g-keep", [A, B])
    emulator.uninstall(F)
    path.write_text(manifest(2))

    drift = run(["drift", "--detailed-exitcode", "--format", "json"] + common, emulator, env=ENV)
    assert drift.returncode == 2, drift.stderr
    check("every-action-drift", drift.stdout, tmp_path, emulator)
    saved = str(tmp_path / "second.plan")
    plan = run(["plan", "--format", "json", "-out", saved] + common, emulator, env=ENV)
    assert plan.returncode == 0, plan.stderr
    check("every-action-plan", plan.stdout, tmp_path, emulator)
    with open(saved) as file:
        check("every-action-saved-plan", file.read(), tmp_path, emulator)
    show = run(["show", "--format", "json", saved], emulator, env=ENV)
    check("every-action-show", show.stdout, tmp_path, emulator)
    # The dry run's requests, in the order the applier sends them, as text (it has no JSON form).
    dry = run(["apply", "--dry-run"] + common, emulator, env={**ENV, "NO_COLOR": "1"})
    assert dry.returncode == 0, dry.stderr
    check_text("every-action-dry-run", dry.stdout, tmp_path, emulator)
    # FCM refuses every subscribe, so the document carries failed outcomes with their address, action and
    # status as well as the settled ones.
    emulator.request("PUT", "/emulator/v1/faults", {"error_rates": [{"endpoint": "topics.create", "status": 400, "rate": 1.0, "fcm_error_code": "INVALID_ARGUMENT"}]})
    apply = run(["apply", "--auto-approve", "--format", "json", saved], emulator, env=ENV)
    assert apply.returncode == 3 and apply.stdout.strip(), apply.stderr  # 3: some operations failed
    check("every-action-apply", apply.stdout, tmp_path, emulator)
