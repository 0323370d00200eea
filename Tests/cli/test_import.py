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
