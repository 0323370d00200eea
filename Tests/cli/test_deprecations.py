"""Deprecation notices with the days left, from an injected clock (FCMCTL_NOW), on both sides of each date;
after the turndown, group and IID operations are refused before any request, and the emulator (its clock
set) answers as FCM will."""
import datetime
import json
import os
import urllib.error

from fcmharness import ROOT, Emulator, run

QUICKSTART = os.path.join(ROOT, "examples/quickstart")
LEGACY = os.path.join(ROOT, "examples/legacy-iid")


def days(until, today):
    return (datetime.date.fromisoformat(until) - datetime.date.fromisoformat(today)).days


def notices(result):
    return {n["id"]: n for n in json.loads(result.stdout)["deprecations"]}


def test_notices_count_the_days_on_both_sides_of_each_date(tmp_path):
    emulator = Emulator()
    try:
        for today in ("2026-11-22", "2026-12-01", "2027-09-28"):
            env = {"FCMCTL_NOW": today}
            plan = run(["plan", "--format", "json", "-f", QUICKSTART, "--state", str(tmp_path / f"q{today}.json")], emulator, env)
            assert plan.returncode == 0, plan.stderr
            found = notices(plan)
            assert set(found) == {"device_groups"}  # the quickstart uses v1 topics
            left = days("2027-09-29", today)
            assert found["device_groups"]["days_left"] == left
            plural = "s" if left != 1 else ""
            # Text says it in one line per run; the document and --verbose carry the whole notice.
            warnings = [line for line in plan.stderr.splitlines() if line.startswith("warning: device groups")]
            assert warnings == [f"warning: device groups are removed from FCM on 2027-09-29 ({left} day{plural} left)"
                                + ("; this plan creates one, which projects new to them cannot since 2026-12-01" if today >= "2026-12-01" else "")
                                + " (--verbose for the next step)"], plan.stderr
            message = found["device_groups"]["message"]
            assert f"FCM removes them on 2027-09-29 ({left} day{plural} left)" in message and "Next step:" in message
            cutoff = days("2026-12-01", today)
            if cutoff > 0:
                assert f"From 2026-12-01 ({cutoff} days left) projects that never used them cannot start" in message
            else:
                # The plan creates a group: after the cut-off, that fails in a project that never had one.
                assert "this plan creates a group, which fails in such a project" in message
            verbose = run(["plan", "--verbose", "-f", QUICKSTART, "--state", str(tmp_path / f"v{today}.json")], emulator, env)
            assert f"warning: {message}" in verbose.stderr, verbose.stderr

            legacy = run(["plan", "--format", "json", "-f", LEGACY, "--state", str(tmp_path / f"l{today}.json")], emulator, env)
            assert legacy.returncode == 0, legacy.stderr
            both = notices(legacy)
            assert set(both) == {"device_groups", "iid_topic_api"}
            assert both["iid_topic_api"]["days_left"] == left and "set project.topicApi: v1" in both["iid_topic_api"]["message"]
            # Both dates: closed to new projects on 2026-10-01, turned down on 2027-09-29.
            assert "closed to new projects since 2026-10-01 and is turned down on 2027-09-29" in both["iid_topic_api"]["message"]
            assert f"is turned down on 2027-09-29 ({left} day{plural} left), closed to new projects since 2026-10-01" in legacy.stderr

        markdown = run(["plan", "--format", "markdown", "-f", QUICKSTART, "--state", str(tmp_path / "m.json")], emulator,
                       {"FCMCTL_NOW": "2026-11-22"})
        assert "⚠️ device groups are deprecated: FCM removes them on 2027-09-29 (311 days left)" in markdown.stdout
    finally:
        emulator.stop()


def test_after_the_turndown_groups_and_iid_are_refused_before_any_request(tmp_path):
    emulator = Emulator()
    try:
        emulator.request("PUT", "/emulator/v1/clock", {"now": "2027-09-30"})
        env = {"FCMCTL_NOW": "2027-09-30"}
        for manifest in (QUICKSTART, LEGACY):
            before = emulator.stats()["log_entries"]
            plan = run(["plan", "-f", manifest, "--state", str(tmp_path / "s.json")], emulator, env)
            assert plan.returncode == 1
            assert "device groups were removed from FCM on 2027-09-29" in plan.stderr and "Migration path:" in plan.stderr
            assert "Nothing was sent" in plan.stderr
            assert emulator.stats()["log_entries"] == before  # not one request
        legacy = run(["apply", "--auto-approve", "-f", LEGACY, "--state", str(tmp_path / "s.json")], emulator, env)
        assert "the legacy Instance ID topic API was turned down on 2027-09-29" in legacy.stderr

        # The emulator, its clock set past the turndown, answers as FCM will.
        try:
            emulator.request("GET", "/fcm/notification?notification_key_name=x", headers={"project_id": "1"})
            raise AssertionError("the group API still answered")
        except urllib.error.HTTPError as error:
            assert error.code == 404 and b"turned down on 2027-09-29" in error.read()
        # On the day before, everything still works.
        emulator.request("PUT", "/emulator/v1/clock", {"now": "2027-09-28"})
        before = run(["apply", "--auto-approve", "-f", QUICKSTART, "--state", str(tmp_path / "ok.json")], emulator, {"FCMCTL_NOW": "2027-09-28"})
        assert before.returncode == 0, before.stderr
    finally:
        emulator.stop()


def test_a_new_project_is_refused_groups_after_the_cutoff_with_the_reason(tmp_path):
    emulator = Emulator()
    try:
        emulator.request("PUT", "/emulator/v1/clock", {"now": "2026-12-02", "new_project": True})
        apply = run(["apply", "--auto-approve", "-f", QUICKSTART, "--state", str(tmp_path / "s.json")], emulator, {"FCMCTL_NOW": "2026-12-02"})
        assert apply.returncode == 3, apply.stdout + apply.stderr
        assert "new projects cannot onboard device groups after 2026-12-01" in apply.stderr
        assert "this plan creates one, which projects new to them cannot since 2026-12-01" in apply.stderr
    finally:
        emulator.stop()


def test_an_unreadable_clock_is_a_usage_error():
    result = run(["validate", "-f", QUICKSTART], env={"FCMCTL_NOW": "next tuesday"})
    assert result.returncode == 64
    assert "FCMCTL_NOW='next tuesday' is not a date" in result.stderr
