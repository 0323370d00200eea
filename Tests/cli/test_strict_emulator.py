"""fcmctl against fcm-emulator in its default mode, as strict as FCM: no member export, registrations known
only through the admin API, projects isolated. Every example converges; groups swap members, survive a
lost create reply and are imported from the operator's records; another project's registration is a
configuration error, never "gone"."""
import json
import os
import shutil

from fcmharness import ROOT, Emulator, run

EXAMPLES = ["quickstart", "kiosk-fleet", "per-user-groups", "legacy-iid", "environments/dev", "environments/prod"]


def strict():
    return Emulator("--strict-registrations")  # the default mode; the flag only tells the harness not to auto-register


def seed(emulator, directory):
    body = run(["validate", "-f", str(directory), "--emulator-seed", "--show-tokens"])
    assert body.returncode == 0, body.stderr
    document = json.loads(body.stdout)
    assert document["registrations"], "the manifest names registrations"
    emulator.request("POST", "/emulator/v1/registrations", document)
    return document


def state_of(emulator):
    return emulator.request("GET", "/emulator/v1/state")


def test_every_example_converges_in_the_default_mode(tmp_path):
    for example in EXAMPLES:
        emulator = strict()
        try:
            directory = os.path.join(ROOT, "examples", example)
            common = ["-f", directory, "--state", str(tmp_path / f"{example.replace('/', '-')}.json")]
            # Like FCM, the emulator knows no registration it was not told of: a plan whose topics declare
            # registrations fcmctl never saw and FCM does not know is refused, shown whole, and names them at
            # their places (issue 30).
            unseeded = run(["plan", "--format", "json"] + common, emulator)
            assert unseeded.returncode == 1, unseeded.stderr
            assert [r["kind"] for r in json.loads(unseeded.stdout)["refusals"]] == ["unknown_registrations"]
            assert "is unknown to FCM" in unseeded.stderr
            seed(emulator, directory)
            first = run(["plan", "--detailed-exitcode"] + common, emulator)
            assert first.returncode == 2, f"{example}: {first.stdout}{first.stderr}"
            applied = run(["apply", "--auto-approve"] + common, emulator)
            assert applied.returncode == 0, f"{example}: {applied.stdout}{applied.stderr}"
            again = run(["plan", "--detailed-exitcode"] + common, emulator)
            assert again.returncode == 0, f"{example}: {again.stdout}{again.stderr}"
            assert "export" not in json.dumps(emulator.request("GET", "/emulator/v1/requests")), "no export request was made"
        finally:
            emulator.stop()


def group_manifest(path, members, topic_members=()):
    topics = f"topics:\n  news:\n    members: {json.dumps(list(topic_members))}\n" if topic_members else ""
    path.write_text(f'project: {{id: alpha, senderId: "111"}}\ngroups:\n  family:\n    members: {json.dumps(members)}\n{topics}')


def group_members(emulator, name):
    return next((g["members"] for g in state_of(emulator)["groups"] if g["name"] == name), None)


TOKENS = [f"strict-{i}:APA91b" + chr(97 + i) * 30 for i in range(8)]


def register(emulator, project, sender, tokens):
    emulator.request("POST", "/emulator/v1/registrations", {"project": project, "sender_id": sender, "registrations": [{"token": t} for t in tokens]})


def test_group_member_swap_and_drift_without_the_export(tmp_path):
    emulator = strict()
    try:
        register(emulator, "alpha", "111", TOKENS)
        manifest = tmp_path / "fcmctl.yaml"
        common = ["-f", str(manifest), "--state", str(tmp_path / "s.json")]
        group_manifest(manifest, TOKENS[:3])
        assert run(["apply", "--auto-approve"] + common, emulator).returncode == 0
        group_manifest(manifest, TOKENS[3:6])  # every member replaced: the group must survive the swap
        swap = run(["apply", "--auto-approve"] + common, emulator)
        assert swap.returncode == 0, swap.stdout + swap.stderr
        assert sorted(group_members(emulator, "family")) == sorted(TOKENS[3:6])
        assert run(["plan", "--detailed-exitcode"] + common, emulator).returncode == 0
        drift = run(["drift", "--format", "json"] + common, emulator)
        assert drift.returncode == 0, drift.stderr
        document = json.loads(drift.stdout)
        assert document["has_drift"] is False
        assert document["not_read_from_fcm"] == [
            "group/family: its members (FCM documents no way to list them; fcmctl compared the 3 it recorded)"]
        assert "Not read from FCM:" in run(["drift"] + common, emulator).stdout
    finally:
        emulator.stop()


def test_the_export_probe_is_used_only_when_named_and_falls_back_with_one_note(tmp_path):
    plain, exporting = strict(), Emulator("--strict-registrations", "--group-export")
    try:
        manifest = tmp_path / "fcmctl.yaml"
        group_manifest(manifest, TOKENS[:2])
        for emulator in (plain, exporting):
            register(emulator, "alpha", "111", TOKENS)
            common = ["-f", str(manifest), "--state", str(tmp_path / f"{emulator.host}.json")]
            assert run(["apply", "--auto-approve"] + common, emulator).returncode == 0
        # Against an emulator without the export: the probe answers 404, one note, and the state's members stand.
        common = ["-f", str(manifest), "--state", str(tmp_path / f"{plain.host}.json")]
        probe = ["--group-export-url", f"http://{plain.host}/fcm/notification/export"]
        plan = run(["plan", "--detailed-exitcode"] + common + probe, plain)
        assert plan.returncode == 0, plan.stdout + plan.stderr
        assert plan.stderr.count("group member export probe is off for this run") == 1, plan.stderr
        assert "answered 404" in plan.stderr
        # With the export: a member removed out of band is drift, read from FCM.
        common = ["-f", str(manifest), "--state", str(tmp_path / f"{exporting.host}.json")]
        exporting.delete_group("111", "family", [TOKENS[1]])
        probe = ["--group-export-url", f"http://{exporting.host}/fcm/notification/export"]
        drift = run(["drift", "--format", "json"] + common + probe, exporting)
        document = json.loads(drift.stdout)
        assert document["has_drift"] is True and document["not_read_from_fcm"] == [], drift.stdout
        blind = json.loads(run(["drift", "--format", "json"] + common, exporting).stdout)
        assert blind["has_drift"] is False and blind["not_read_from_fcm"], "without the probe the change cannot be seen, and drift says so"
    finally:
        plain.stop()
        exporting.stop()


def test_a_lost_group_create_reply_is_recovered_by_name(tmp_path):
    emulator = strict()
    try:
        register(emulator, "alpha", "111", TOKENS)
        emulator.request("PUT", "/emulator/v1/faults", {"drop_after_commit": [{"endpoint": "groups.mutate", "status": 0, "rate": 1}]})
        manifest = tmp_path / "fcmctl.yaml"
        common = ["-f", str(manifest), "--state", str(tmp_path / "s.json")]
        group_manifest(manifest, TOKENS[:2])
        lost = run(["apply", "--auto-approve"] + common, emulator)
        assert lost.returncode == 3, lost.stdout + lost.stderr  # every reply lost: the create is pending, not forgotten
        assert sorted(group_members(emulator, "family")) == sorted(TOKENS[:2])
        emulator.request("PUT", "/emulator/v1/faults", {})
        again = run(["apply", "--auto-approve"] + common, emulator)
        assert again.returncode == 0, again.stdout + again.stderr
        assert run(["plan", "--detailed-exitcode"] + common, emulator).returncode == 0
        assert "family" in run(["state", "list"] + common).stdout
        # The manifest emptied: the group is removed, no orphan although FCM never listed its members.
        manifest.write_text('project: {id: alpha, senderId: "111"}\n')
        emptied = run(["apply", "--auto-approve", "--allow-empty"] + common, emulator)
        assert emptied.returncode == 0, emptied.stdout + emptied.stderr
        assert group_members(emulator, "family") is None
    finally:
        emulator.stop()


def test_a_lost_create_reply_retried_in_the_same_run_finds_the_group_by_name(tmp_path):
    # Half the group replies lost after the change, seeded so every run meets the same faults: a create whose
    # retry meets "already exists" reads the key by name (the documented GET) and counts as done.
    emulator = Emulator("--strict-registrations", "--drop-after-commit-rate", "groups.mutate=0.5", "--seed", "7")
    try:
        register(emulator, "alpha", "111", TOKENS)
        recovered = 0
        seen = 0
        for round in range(12):
            manifest = tmp_path / f"m{round}.yaml"
            manifest.write_text(f'project: {{id: alpha, senderId: "111"}}\ngroups:\n  g{round}:\n    members: {json.dumps(TOKENS[:2])}\n')
            common = ["-f", str(manifest), "--state", str(tmp_path / f"s{round}.json"), "--parallelism", "1"]
            applied = run(["apply", "--auto-approve"] + common, emulator)
            log = emulator.request("GET", "/emulator/v1/requests")["requests"]
            statuses = [r["status"] for r in log[seen:] if r["endpoint"] == "groups.mutate"]
            seen = len(log)
            if statuses == [0, 400]:
                assert applied.returncode == 0, applied.stdout + applied.stderr
                recovered += 1
            assert applied.returncode in (0, 3), applied.stdout + applied.stderr
        assert recovered >= 1, "no create was answered only by its retry's 'already exists'"
        emulator.request("PUT", "/emulator/v1/faults", {})
        for round in range(12):
            common = ["-f", str(tmp_path / f"m{round}.yaml"), "--state", str(tmp_path / f"s{round}.json")]
            settled = run(["apply", "--auto-approve"] + common, emulator)
            assert settled.returncode == 0, settled.stdout + settled.stderr
            assert run(["plan", "--detailed-exitcode"] + common, emulator).returncode == 0
            assert sorted(group_members(emulator, f"g{round}")) == sorted(TOKENS[:2])
    finally:
        emulator.stop()


def test_import_group_takes_members_from_the_manifest(tmp_path):
    emulator = strict()
    try:
        register(emulator, "alpha", "111", TOKENS)
        emulator.request("POST", "/fcm/notification", {"operation": "create", "notification_key_name": "family", "registration_ids": TOKENS[:2]},
                         headers={"project_id": "111", "access_token_auth": "true"})
        manifest = tmp_path / "fcmctl.yaml"
        group_manifest(manifest, TOKENS[:2])
        common = ["-f", str(manifest), "--state", str(tmp_path / "s.json")]
        plan = run(["plan", "--detailed-exitcode"] + common, emulator)
        assert plan.returncode == 0 and "exists in FCM but not in the state" in plan.stderr
        imported = run(["import", "group", "family"] + common, emulator)
        assert imported.returncode == 0, imported.stderr
        assert "recorded with its 2 declared members; nothing to write" in imported.stderr, imported.stderr
        assert "family" in run(["state", "list"] + common).stdout
        group_manifest(manifest, [TOKENS[0], TOKENS[2]])
        swap = run(["apply", "--auto-approve"] + common, emulator)
        assert swap.returncode == 0, swap.stdout + swap.stderr
        assert sorted(group_members(emulator, "family")) == sorted([TOKENS[0], TOKENS[2]])
    finally:
        emulator.stop()


def test_two_projects_stay_apart_and_a_foreign_registration_is_a_configuration_error(tmp_path):
    emulator = strict()
    try:
        register(emulator, "alpha", "111", TOKENS[:4])
        register(emulator, "beta", "222", TOKENS[4:])
        alpha, beta = tmp_path / "alpha.yaml", tmp_path / "beta.yaml"
        alpha.write_text(f'project: {{id: alpha, senderId: "111"}}\ntopics:\n  news:\n    members: {json.dumps(TOKENS[:4])}\n')
        beta.write_text(f'project: {{id: beta, senderId: "222"}}\ntopics:\n  news:\n    members: {json.dumps(TOKENS[4:])}\n')
        before = {r["id"]: r["topics"] for r in state_of(emulator)["registrations"] if r["id"] in TOKENS[4:]}
        applied = run(["apply", "--auto-approve", "-f", str(alpha), "--state", str(tmp_path / "a.json")], emulator)
        assert applied.returncode == 0, applied.stdout + applied.stderr
        after = {r["id"]: r["topics"] for r in state_of(emulator)["registrations"] if r["id"] in TOKENS[4:]}
        assert before == after, "an apply in alpha changed beta"
        # A beta registration declared in alpha: SENDER_ID_MISMATCH, reported with the project, never as gone.
        alpha.write_text(f'project: {{id: alpha, senderId: "111"}}\ntopics:\n  news:\n    members: {json.dumps(TOKENS[:4] + [TOKENS[5]])}\n')
        wrong = run(["plan", "--show-tokens", "-f", str(alpha), "--state", str(tmp_path / "a.json")], emulator)
        assert wrong.returncode == 1, wrong.stdout + wrong.stderr
        assert "SENDER_ID_MISMATCH" in wrong.stderr and "another Firebase project than 'alpha'" in wrong.stderr, wrong.stderr
        assert "no longer registered" not in wrong.stderr + wrong.stdout
        send = run(["send", "--token", TOKENS[5], "--title", "hi", "-f", str(alpha)], emulator)
        assert send.returncode != 0 and "SENDER_ID_MISMATCH" in send.stderr, send.stdout + send.stderr
    finally:
        emulator.stop()
