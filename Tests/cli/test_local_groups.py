"""The road off device groups: `migrate groups` rewrites FCM groups as local ones (comments kept), `--apply`
deletes the FCM groups only after a fan-out check, and `send --group` fans out to every member's inbox."""
import os
import shutil

from fcmharness import ROOT, Emulator, run

QUICKSTART = os.path.join(ROOT, "examples/quickstart")
MEMBERS = ["cR1rjyj4_KcAPA91bGusQ2", "fGw0qy4TGgk:APA91bHun4MxP5egoKMwt2KZFBaFUH-1RYqx"]


def test_migrate_then_send_reaches_every_member_once(tmp_path):
    emulator = Emulator()
    try:
        directory = tmp_path / "fcm"
        shutil.copytree(QUICKSTART, directory)
        common = ["-f", str(directory)]
        assert run(["apply", "--auto-approve"] + common, emulator).returncode == 0
        assert group_exists(emulator, "appUser-Chris")

        migrated = run(["migrate", "groups"] + common, emulator)
        assert migrated.returncode == 0, migrated.stderr
        text = (directory / "fcmctl.yaml").read_text()
        assert "appUser-Chris:  # one person's devices, messaged together\n    mode: local\n" in text  # comments kept
        assert run(["fmt", "--check", str(directory)]).returncode == 0
        assert group_exists(emulator, "appUser-Chris")  # nothing deleted without --apply

        before = len(emulator.request("GET", "/emulator/v1/requests")["requests"])
        applied = run(["migrate", "groups", "--apply"] + common, emulator)
        assert applied.returncode == 0, applied.stdout + applied.stderr
        assert "Dry run (validate only) to local group/appUser-Chris: 2 members, 2 validated, 0 unregistered, 0 failed." in applied.stdout
        assert not group_exists(emulator, "appUser-Chris")
        log = emulator.request("GET", "/emulator/v1/requests")["requests"][before:]
        endpoints = [entry["endpoint"] for entry in log]
        # The check ran first; the group went only after every member had answered.
        assert endpoints.count("messages.send") == 2
        assert max(i for i, e in enumerate(endpoints) if e == "messages.send") < min(i for i, e in enumerate(endpoints) if e == "groups.mutate")
        assert all(not inbox(emulator, member) for member in MEMBERS)  # validate only: nothing delivered

        sent = run(["send", "--group", "appUser-Chris", "--title", "hello"] + common, emulator)
        assert sent.returncode == 0, sent.stderr
        assert "Fan-out to local group/appUser-Chris: 2 members, 2 sent, 0 unregistered, 0 failed." in sent.stdout
        for member in MEMBERS:
            messages = inbox(emulator, member)
            assert len(messages) == 1 and messages[0]["message"]["notification"]["title"] == "hello"
        assert run(["plan", "--detailed-exitcode"] + common, emulator).returncode == 0
    finally:
        emulator.stop()


def group_exists(emulator, name):
    import urllib.error
    import urllib.parse

    try:
        emulator.request("GET", "/fcm/notification?notification_key_name=" + urllib.parse.quote(name), headers={"project_id": "123456789012"})
        return True
    except urllib.error.HTTPError:
        return False


def inbox(emulator, registration):
    import urllib.parse

    return emulator.request("GET", f"/emulator/v1/registrations/{urllib.parse.quote(registration, safe='')}/inbox")["messages"]


def test_dead_members_of_a_local_group_are_drift(tmp_path):
    emulator = Emulator()
    try:
        alive, dead = "local-a:APA91b" + "a" * 30, "local-b:APA91b" + "b" * 30
        emulator.register(alive, dead)
        path = tmp_path / "fcmctl.yaml"
        path.write_text(f'project: {{id: local-demo, senderId: "9"}}\ngroups:\n  crew:\n    mode: local\n    members: ["{alive}", "{dead}"]\n')
        common = ["-f", str(path), "--state", str(tmp_path / "s.json")]
        assert run(["drift", "--detailed-exitcode"] + common, emulator).returncode == 0
        emulator.uninstall(dead)
        drift = run(["drift", "--detailed-exitcode"] + common, emulator)
        assert drift.returncode == 2 and "group/crew" in drift.stdout and "dead_registrations" in drift.stdout
        sent = run(["send", "--group", "crew", "--title", "t", "-f", str(path)], emulator)
        assert sent.returncode == 0, sent.stderr
        assert "1 sent, 1 unregistered, 0 failed" in sent.stdout and "remove it from the manifest" in sent.stdout
    finally:
        emulator.stop()
