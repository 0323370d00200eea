"""`plan --refresh=changed` reads from FCM only the registrations whose declaration changed since the last
apply (plus new, removed and pending ones), and says so; `--refresh=all` still reads everything."""
import json

from fcmharness import Emulator, run

PROJECT = "refresh-demo"
COUNT = 1000


def token(i):
    return f"fleet-{i:05d}:APA91b{'r' * 40}"


def manifest(extra_news=(), dropped=()):
    weather = [token(i) for i in range(COUNT) if i not in dropped]
    news = [token(i) for i in range(0, COUNT, 2)] + [token(i) for i in extra_news]
    lines = [f'project: {{id: {PROJECT}, senderId: "1"}}', "groups:", "  ops:", f'    members: ["{token(0)}", "{token(1)}"]', "topics:"]
    for name, members in (("weather", weather), ("news", sorted(set(news)))):
        lines += [f"  {name}:", "    members:"] + [f'      - "{m}"' for m in members]
    return "\n".join(lines) + "\n"


def list_requests(emulator):
    return emulator.stats()["endpoints"].get("topics.list", {}).get("requests", 0)


def test_changed_refresh_reads_only_what_changed(tmp_path):
    emulator = Emulator()
    try:
        path = tmp_path / "fcmctl.yaml"
        state = tmp_path / "state.json"
        common = ["-f", str(path), "--state", str(state)]
        path.write_text(manifest())
        assert run(["apply", "--auto-approve"] + common, emulator).returncode == 0

        # A pull request: 7 registrations join news, 3 leave weather.
        joined, dropped = (1, 3, 5, 7, 9, 11, 13), (100, 200, 300)
        path.write_text(manifest(extra_news=joined, dropped=dropped))
        before = list_requests(emulator)
        plan = run(["plan", "--refresh=changed", "--detailed-exitcode", "--format", "json"] + common, emulator)
        assert plan.returncode == 2, plan.stderr
        assert list_requests(emulator) - before == 10  # exactly the changed registrations
        document = json.loads(plan.stdout)
        assert document["refresh"] == {
            "mode": "changed", "registrations_read": 10, "registrations_known": COUNT, "groups_read": 0, "groups_known": 1}
        assert "Refresh: changed only (10 of 1000 registrations, 0 of 1 group read)" in plan.stderr
        changes = {c["address"]: c["counts"] for c in document["changes"]}
        assert changes["topic/news"]["add"] == 7 and changes["topic/weather"]["remove"] == 3
        # Only the changed registrations were read: how many keep their subscription is not known, and no
        # format says 0 (a full refresh says 500 and 997).
        assert changes["topic/news"]["unchanged"] is None and changes["topic/weather"]["unchanged"] is None
        text = run(["plan", "--refresh=changed"] + common, emulator).stdout
        assert "~ topic/news  +7 −0 (unchanged: not read)" in text and "0 unchanged" not in text
        markdown = run(["plan", "--refresh=changed", "--format", "markdown"] + common, emulator).stdout
        assert "<code>~ topic/news</code> update +7 −0 (unchanged: not read)" in markdown and "0 unchanged" not in markdown

        # The full refresh reads everything and agrees.
        before = list_requests(emulator)
        full = run(["plan", "--format", "json"] + common, emulator)
        assert list_requests(emulator) - before == COUNT
        full_changes = {c["address"]: tuple(c["counts"].values()) for c in json.loads(full.stdout)["changes"]}
        assert full_changes == {"topic/news": (7, 0, 500), "topic/weather": (0, 3, 997)}

        # A saved plan from the changed refresh applies, and records the new declaration as applied.
        saved = str(tmp_path / "pr.plan")
        assert run(["plan", "--refresh=changed", "-out", saved] + common, emulator).returncode == 0
        applied = run(["apply", saved, "--auto-approve"] + common[2:], emulator)
        assert applied.returncode == 0, applied.stderr
        before = list_requests(emulator)
        after = run(["plan", "--refresh=changed", "--detailed-exitcode"] + common, emulator)
        assert after.returncode == 0, after.stdout + after.stderr
        assert list_requests(emulator) - before == 0
        assert "Refresh: changed only (0 of 1000 registrations, 0 of 1 group read)" in after.stderr

        # A group member change reads that group only.
        path.write_text(manifest(extra_news=joined, dropped=dropped).replace(f'["{token(0)}", "{token(1)}"]', f'["{token(0)}"]'))
        grouped = run(["plan", "--refresh=changed", "--format", "json"] + common, emulator)
        document = json.loads(grouped.stdout)
        assert document["refresh"]["groups_read"] == 1 and document["refresh"]["registrations_read"] == 0
        assert [c["address"] for c in document["changes"]] == ["group/ops"]
    finally:
        emulator.stop()
