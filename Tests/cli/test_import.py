"""`fcmctl import` adopts what the apps made: 3 device groups and 50 subscriptions on a real emulator become
a manifest that validates, is in canonical form, plans clean, and whose removals are fcmctl's to make."""
import json
import os

from fcmharness import Emulator, run

PROJECT, SENDER = "import-demo", "555"
DEVICES = [f"imp-{i}:APA91b{chr(97 + i) * 30}" for i in range(10)]
GROUPS = {"family-a": DEVICES[0:2], "family-b": DEVICES[2:5], "solo": DEVICES[5:6]}
TOPICS = ["alerts", "news", "sports", "weather", "promo"]


def seed(emulator):
    emulator.register(*DEVICES)
    for name, members in GROUPS.items():
        emulator.request("POST", "/fcm/notification", {"operation": "create", "notification_key_name": name, "registration_ids": members},
                         headers={"project_id": SENDER})
    for device in DEVICES:
        for topic in TOPICS:
            emulator.subscribe(PROJECT, device, topic)


def test_import_groups_and_subscriptions(tmp_path):
    emulator = Emulator()
    try:
        seed(emulator)
        directory = tmp_path / "fcm"
        directory.mkdir()
        devices = "".join(f"  kiosk-{i}: {{token: \"{d}\"}}\n" for i, d in enumerate(DEVICES[:8]))  # two devices unnamed
        (directory / "project.yaml").write_text(f'project: {{id: {PROJECT}, senderId: "{SENDER}"}}\ndevices:\n{devices}')
        assert run(["fmt", str(directory / "project.yaml")]).returncode == 0  # the team's own file, in canonical form
        common = ["-f", str(directory)]

        # FCM documents no member list: the members come from the team's own records, one file per group.
        unlisted = run(["import", "group", "family-a"] + common, emulator)
        assert unlisted.returncode == 1
        assert "FCM documents no way to list the members of group family-a" in unlisted.stderr, unlisted.stderr
        lists = {}
        for name, members in GROUPS.items():
            lists[name] = tmp_path / f"{name}.txt"
            lists[name].write_text("# the team's records\n" + "\n".join(members) + "\n")
        dry = run(["import", "group", "family-a", "--members", str(lists["family-a"]), "--dry-run"] + common, emulator)
        assert dry.returncode == 0, dry.stderr
        assert "family-a:" in dry.stdout and "kiosk-0" in dry.stdout and "nothing was recorded" in dry.stderr
        assert not (directory / ".fcmctl" / "state.json").exists()
        missing = run(["import", "group", "no-such-group", "--members", str(lists["solo"])] + common, emulator)
        assert missing.returncode == 1 and "group no-such-group does not exist in FCM" in missing.stderr

        for name in GROUPS:
            output = directory / f"group-{name}.yaml"
            groups = run(["import", "group", name, "--members", str(lists[name]), "-o", str(output)] + common, emulator)
            assert groups.returncode == 0, groups.stderr
        text = (directory / "group-family-b.yaml").read_text()
        assert f"# 3 members, listed in {lists['family-b']}" in text and "- kiosk-2" in text

        registrations = tmp_path / "registrations.txt"
        registrations.write_text("\n".join(DEVICES) + "\n")
        subscriptions = run(
            ["import", "subscriptions", "--registrations", str(registrations), "-o", str(directory / "topics.yaml")] + common, emulator)
        assert subscriptions.returncode == 0, subscriptions.stderr
        topics = (directory / "topics.yaml").read_text()
        assert "# 10 subscriptions found in FCM" in topics and "- kiosk-7" in topics and DEVICES[9].split(":")[0] in topics

        assert run(["validate"] + common).returncode == 0
        fmt = run(["fmt", "--check", str(directory)])
        assert fmt.returncode == 0, fmt.stdout + fmt.stderr
        plan = run(["plan", "--detailed-exitcode"] + common, emulator)
        assert plan.returncode == 0, plan.stdout + plan.stderr

        # One imported subscription removed from the manifest: exactly one removal, fcmctl's to make.
        lines = topics.splitlines(keepends=True)
        news = lines.index(next(line for line in lines if line.startswith("  news:")))
        victim = next(i for i in range(news, len(lines)) if lines[i].strip() == "- kiosk-3")
        (directory / "topics.yaml").write_text("".join(lines[:victim] + lines[victim + 1:]))
        after = run(["plan", "--format", "json"] + common, emulator)
        document = json.loads(after.stdout)
        assert document["summary"]["subscriptions_to_remove"] == 1 and document["summary"]["subscriptions_to_add"] == 0
        assert [(c["address"], c["counts"]["remove"]) for c in document["changes"]] == [("topic/news", 1)]
    finally:
        emulator.stop()


def test_an_existing_group_is_adopted_only_when_asked(tmp_path):
    emulator = Emulator()
    try:
        seed(emulator)
        path = tmp_path / "fcmctl.yaml"
        # Declared with one more member than FCM has.
        path.write_text(f'project: {{id: {PROJECT}, senderId: "{SENDER}"}}\ngroups:\n  family-a:\n'
                        f'    members: ["{DEVICES[0]}", "{DEVICES[1]}", "{DEVICES[7]}"]\n')
        common = ["-f", str(path), "--state", str(tmp_path / "s.json")]
        plan = run(["plan", "--detailed-exitcode"] + common, emulator)
        assert plan.returncode == 0, plan.stdout + plan.stderr  # nothing planned for a group fcmctl does not know
        assert "group/family-a exists in FCM but not in the state: import it (fcmctl import group family-a) or let apply adopt it" in plan.stderr
        assert run(["apply", "--auto-approve"] + common, emulator).returncode == 0
        assert "family-a" not in run(["state", "list"] + common).stdout

        adopted = run(["apply", "--auto-approve", "--adopt-existing"] + common, emulator)
        assert adopted.returncode == 0, adopted.stderr
        assert "group/family-a: 1 operation done" in adopted.stdout
        assert "group/family-a" in run(["state", "list"] + common).stdout
        assert run(["plan", "--detailed-exitcode"] + common, emulator).returncode == 0
    finally:
        emulator.stop()


def test_registrations_without_subscriptions_import_as_a_comment(tmp_path):
    """Nothing to import is a file that says so (the formatter once refused a file of comments alone)."""
    emulator = Emulator()
    try:
        emulator.register(DEVICES[0])
        directory = tmp_path / "fcm"
        directory.mkdir()
        (directory / "project.yaml").write_text(f'project: {{id: {PROJECT}, senderId: "{SENDER}"}}\n')
        registrations = tmp_path / "registrations.txt"
        registrations.write_text(DEVICES[0] + "\n")
        result = run(["import", "subscriptions", "--registrations", str(registrations), "--dry-run", "-f", str(directory)], emulator)
        assert result.returncode == 0, result.stderr
        assert result.stdout.startswith("# Imported by `fcmctl import subscriptions` on ") and result.stdout.endswith(
            ": no subscriptions found.\n"), result.stdout
        assert "nothing was recorded" in result.stderr
    finally:
        emulator.stop()


# Issue 30: import beside an environment that includes a shared base (examples/environments), on an emulator that
# knows only the registrations it was told of. What import writes must validate beside the manifests, record
# exactly what it declares, and leave the next plan clean: apply then moves no subscription.

PROD_SENDER = "111100000002"
PROD = {name: token for name, token in (
    ("prod-kiosk-nyc-1", "pK1nyc0001:APA91bProdKioskNycToken00000001"),
    ("prod-kiosk-nyc-2", "pK1nyc0002:APA91bProdKioskNycToken00000002"),
    ("prod-kiosk-lon-1", "pK1lon0001:APA91bProdKioskLonToken00000001"),
)}
UNNAMED = "pX9unnamed:APA91bAnAppRegistrationNoDeviceNames"  # registered, but named by no manifest


def environments(tmp_path):
    """A copy of examples/environments and a strict emulator that knows prod's registrations, with prod applied."""
    import shutil

    from fcmharness import ROOT

    tree = tmp_path / "environments"
    shutil.copytree(os.path.join(ROOT, "examples", "environments"), tree)
    emulator = Emulator("--strict-registrations")
    emulator.request("POST", "/emulator/v1/registrations", {
        "project": "acme-prod", "sender_id": PROD_SENDER, "registrations": [{"token": t} for t in [*PROD.values(), UNNAMED]]})
    return tree, emulator


def topics_of(emulator, token):
    import urllib.parse

    body = emulator.request("GET", "/emulator/v1/registrations/" + urllib.parse.quote(token, safe=""))
    return sorted(topic["name"] for topic in body["topics"])


def everything(emulator):
    return {name: topics_of(emulator, token) for name, token in [*PROD.items(), ("unnamed", UNNAMED)]}


def last_seq(emulator):
    return emulator.request("GET", "/emulator/v1/requests").get("last_seq", 0)


def changes_since(emulator, seq):
    """The requests after `seq` that change FCM: subscriptions removed or added, groups changed."""
    requests = emulator.request("GET", f"/emulator/v1/requests?after={seq}")["requests"]
    return [(r["method"], r["endpoint"]) for r in requests if r["method"] in ("POST", "DELETE", "PATCH", "PUT")]


def state_addresses(directory):
    listed = run(["state", "list", "-f", str(directory)])
    assert listed.returncode == 0, listed.stderr
    return listed.stdout


def test_imported_subscriptions_validate_beside_an_environment_and_plan_clean(tmp_path):
    tree, emulator = environments(tmp_path)
    try:
        prod = tree / "prod"
        applied = run(["apply", "--auto-approve", "-f", str(prod)], emulator)
        assert applied.returncode == 0, applied.stdout + applied.stderr
        # The apps subscribe on their own: two devices to a topic no manifest declares, one device to a base topic
        # it is not declared in (lon is not nyc), and a registration no manifest names to `promo` too.
        for name in ("prod-kiosk-lon-1", "prod-kiosk-nyc-1"):
            emulator.subscribe("acme-prod", PROD[name], "promo")
        emulator.subscribe("acme-prod", PROD["prod-kiosk-lon-1"], "weather-nyc")
        emulator.subscribe("acme-prod", UNNAMED, "promo")
        before = everything(emulator)
        assert before["prod-kiosk-lon-1"] == ["industry-tech", "promo", "weather-nyc"], before

        registrations = tmp_path / "registrations.txt"
        registrations.write_text("\n".join([*PROD.values(), UNNAMED]) + "\n")
        output = prod / "imported.yaml"
        imported = run(["import", "subscriptions", "--registrations", str(registrations), "-f", str(prod), "-o", str(output)], emulator)
        assert imported.returncode == 0, imported.stderr
        text = output.read_text()
        assert "promo:" in text and "- prod-kiosk-lon-1" in text and "- prod-kiosk-nyc-1" in text and UNNAMED in text, text
        # The base's topic is not redeclared (it is defined in base/topics.yaml), and the file says why.
        assert "\n  weather-nyc:" not in text and "industry-tech:" not in text, text
        assert "Not written here: 1 subscription to topic/weather-nyc" in text, text
        assert "topic/weather-nyc is declared at" in imported.stderr and "(prod-kiosk-lon-1): not imported" in imported.stderr
        assert "fcmctl's already (recorded in the state)" in imported.stderr, imported.stderr
        assert oct(os.stat(output).st_mode & 0o777) == "0o600"

        validated = run(["validate", "-f", str(prod)])
        assert validated.returncode == 0, validated.stdout + validated.stderr
        assert run(["validate", "-f", str(tree / "dev")]).returncode == 0  # the base is untouched, dev unaffected
        assert run(["fmt", "--check", str(prod)]).returncode == 0
        plan = run(["plan", "--detailed-exitcode", "-f", str(prod)], emulator)
        assert plan.returncode == 0, plan.stdout + plan.stderr

        # Recorded: exactly what the file declares, never the app's subscription to the base topic.
        assert "topic/promo" in state_addresses(prod)
        for topic, count in (("promo", 3), ("weather-nyc", 2), ("industry-tech", 3)):  # weather-nyc: nyc-1 and nyc-2, fcmctl's
            shown = run(["state", "show", f"topic/{topic}", "-f", str(prod)])
            assert f"subscriptions fcmctl created: {count}" in shown.stdout, (topic, shown.stdout + shown.stderr)
        seq = last_seq(emulator)
        applied = run(["apply", "--auto-approve", "-f", str(prod)], emulator)
        assert applied.returncode == 0, applied.stdout + applied.stderr
        assert changes_since(emulator, seq) == [], "apply changed nothing in FCM"
        assert everything(emulator) == before

        # The import's records are fcmctl's: taking a device out of promo removes exactly that subscription.
        output.write_text(text.replace("      - prod-kiosk-nyc-1\n", ""))
        removal = run(["plan", "--format", "json", "-f", str(prod)], emulator)
        summary = json.loads(removal.stdout)["summary"]
        assert (summary["subscriptions_to_remove"], summary["subscriptions_to_add"]) == (1, 0), summary
    finally:
        emulator.stop()


def test_import_group_records_a_declared_group_and_writes_only_an_undeclared_one(tmp_path):
    tree, emulator = environments(tmp_path)
    try:
        prod = tree / "prod"
        # The apps made both groups: ops-oncall, which prod declares, and night-shift, which nothing declares.
        for name, members in (("ops-oncall", ["prod-kiosk-lon-1", "prod-kiosk-nyc-1"]), ("night-shift", ["prod-kiosk-nyc-2"])):
            emulator.request("POST", "/fcm/notification", {
                "operation": "create", "notification_key_name": name, "registration_ids": [PROD[m] for m in members]},
                headers={"project_id": PROD_SENDER})
        applied = run(["apply", "--auto-approve", "-f", str(prod)], emulator)
        assert applied.returncode == 0, applied.stdout + applied.stderr
        assert "group/ops-oncall exists in FCM but not in the state" in applied.stderr, applied.stderr

        output = prod / "groups.yaml"
        declared = run(["import", "group", "ops-oncall", "-f", str(prod), "-o", str(output)], emulator)
        assert declared.returncode == 0, declared.stderr
        assert "group/ops-oncall is declared at" in declared.stderr and "recorded with its 2 declared members" in declared.stderr
        assert f"Nothing to write: {output} was not written." in declared.stderr and not output.exists()
        assert "group/ops-oncall" in state_addresses(prod)

        members = tmp_path / "night-shift.txt"
        members.write_text(PROD["prod-kiosk-nyc-2"] + "\n")
        undeclared = run(["import", "group", "night-shift", "--members", str(members), "-f", str(prod), "-o", str(output)], emulator)
        assert undeclared.returncode == 0, undeclared.stderr
        text = output.read_text()
        assert "night-shift:" in text and "- prod-kiosk-nyc-2" in text and "ops-oncall" not in text, text

        validated = run(["validate", "-f", str(prod)])
        assert validated.returncode == 0, validated.stdout + validated.stderr
        plan = run(["plan", "--detailed-exitcode", "-f", str(prod)], emulator)
        assert plan.returncode == 0, plan.stdout + plan.stderr
        assert "exists in FCM but not in the state" not in plan.stderr, plan.stderr
        recorded = state_addresses(prod)
        assert "group/ops-oncall" in recorded and "group/night-shift" in recorded, recorded
        seq = last_seq(emulator)
        applied = run(["apply", "--auto-approve", "-f", str(prod)], emulator)
        assert applied.returncode == 0, applied.stdout + applied.stderr
        assert changes_since(emulator, seq) == [], "apply changed nothing in FCM"
        groups = {g["name"]: g["members"] for g in emulator.request("GET", "/emulator/v1/groups")["groups"]}
        assert set(groups) == {"ops-oncall", "night-shift"}, groups
    finally:
        emulator.stop()


def test_the_mistakes_an_importer_makes(tmp_path):
    tree, emulator = environments(tmp_path)
    try:
        prod = tree / "prod"
        state = prod / ".fcmctl" / "state.json"
        assert run(["apply", "--auto-approve", "-f", str(prod)], emulator).returncode == 0
        emulator.subscribe("acme-prod", PROD["prod-kiosk-lon-1"], "promo")
        output = prod / "imported.yaml"
        first = run(["import", "subscriptions", "-f", str(prod), "-o", str(output)], emulator)
        assert first.returncode == 0, first.stderr
        assert run(["validate", "-f", str(prod)]).returncode == 0
        assert run(["plan", "--detailed-exitcode", "-f", str(prod)], emulator).returncode == 0
        written, recorded = output.read_text(), state.read_text()

        # Twice onto the same file: refused before FCM is read; the file and the state stay as they were.
        again = run(["import", "subscriptions", "-f", str(prod), "-o", str(output)], emulator)
        assert again.returncode == 1 and f"{output} exists; import writes a new file" in again.stderr, again.stderr
        # Onto one of the manifests: the same.
        manifest = prod / "fcmctl.yaml"
        original = manifest.read_text()
        onto = run(["import", "subscriptions", "-f", str(prod), "-o", str(manifest)], emulator)
        assert onto.returncode == 1 and "exists" in onto.stderr and manifest.read_text() == original
        # Twice into another file: everything is declared now, so nothing is written and nothing recorded.
        second = prod / "imported-2.yaml"
        twice = run(["import", "subscriptions", "-f", str(prod), "-o", str(second)], emulator)
        assert twice.returncode == 0, twice.stderr
        assert "Nothing to write" in twice.stderr and "Nothing new to record" in twice.stderr and not second.exists(), twice.stderr
        assert output.read_text() == written and state.read_text() == recorded
        # Into the shared base: refused, since dev reads it too.
        shared = run(["import", "subscriptions", "-f", str(prod), "-o", str(tree / "base" / "imported.yaml")], emulator)
        assert shared.returncode == 1 and "the manifest that declares this environment's project" in shared.stderr, shared.stderr
        assert not (tree / "base" / "imported.yaml").exists()
        # Without -o: printed, and nothing it declares is recorded (nobody may ever save it).
        emulator.subscribe("acme-prod", PROD["prod-kiosk-nyc-2"], "flash-sale")
        printed = run(["import", "subscriptions", "-f", str(prod)], emulator)
        assert printed.returncode == 0, printed.stderr
        assert "flash-sale:" in printed.stdout and "Nothing the printed YAML declares was recorded" in printed.stderr
        assert state.read_text() == recorded
        assert run(["plan", "--detailed-exitcode", "-f", str(prod)], emulator).returncode == 0

        # An authoritative topic would remove the app's subscription it does not declare: import refuses, writes
        # and records nothing, and says where the declaration is.
        topics = tree / "base" / "topics.yaml"
        topics.write_text(topics.read_text().replace("  weather-nyc:\n", "  weather-nyc:\n    ownership: authoritative\n"))
        emulator.subscribe("acme-prod", PROD["prod-kiosk-lon-1"], "weather-nyc")
        third = prod / "imported-3.yaml"
        refused = run(["import", "subscriptions", "-f", str(prod), "-o", str(third)], emulator)
        assert refused.returncode == 1, refused.stderr
        assert "the next plan would remove 1 subscription the apps made" in refused.stderr, refused.stderr
        assert "topic/weather-nyc (authoritative declared at" in refused.stderr and "prod-kiosk-lon-1" in refused.stderr
        assert not third.exists() and state.read_text() == recorded
        # What it refused to hide is what the plan shows.
        plan = run(["plan", "--format", "json", "-f", str(prod)], emulator)
        changes = {c["address"]: c["counts"] for c in json.loads(plan.stdout)["changes"]}
        assert changes.get("topic/weather-nyc", {}).get("remove") == 1, changes
    finally:
        emulator.stop()
