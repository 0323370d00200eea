"""Plans that read only what changed (issue 35, point 3), on the built binary: `plan --refresh=changed` of a
sharded state reads only the shards whose declarations changed, and the apply of its saved plan reads and
writes only those. Checked differentially: the same pull requests, mistakes included, are planned and applied
against a sharded state (read in part) and a single-document state (read whole), each with its own emulator,
and every plan and every resulting state must be the same."""
import json

import pytest

from fcmharness import Emulator, FakeGCS, run

PROJECT = "partial"
SHARDS = 16


def token(i, rotated=False):
    return f"dev-{i:04d}{'r' if rotated else ''}:APA91b{'q' * 30}"


def fleet(devices):
    """devices: {number: set of topics}; topic `alerts` is authoritative."""
    topics = {}
    for number, names in devices.items():
        for name in names:
            topics.setdefault(name, []).append(number)
    return topics


def write_manifest(path, devices, state_line="", rotated=(), observed=()):
    lines = [f'project: {{id: {PROJECT}, senderId: "7"}}', state_line, "devices:"]
    for number in sorted(devices):
        lines.append(f'  d{number}: {{token: "{token(number, number in rotated)}"}}')
    lines.append("topics:")
    for name, members in sorted(fleet(devices).items()):
        lines.append(f"  {name}:")
        if name == "alerts":
            lines.append("    ownership: authoritative")
        elif name in observed:
            lines.append("    ownership: observe")
        lines.append("    members: [" + ", ".join(f"d{n}" for n in sorted(members)) + "]")
    path.write_text("\n".join(line for line in lines if line) + "\n")


def start_fleet():
    devices = {}
    for i in range(80):
        devices[i] = {"news"} | ({"sports"} if i % 3 == 0 else set()) | ({"alerts"} if i % 5 == 0 else set())
    return devices


class World:
    """One emulator and one state: `sharded` (FCMCTL_STATE_SHARDS, local or gcs) or a single document."""

    def __init__(self, tmp_path, name, sharded, gcs=None):
        self.emulator = Emulator()
        self.emulator.register(*[token(i) for i in range(200)], *[token(i, True) for i in range(200)])
        self.dir = tmp_path / name
        self.dir.mkdir()
        self.path = self.dir / "fcmctl.yaml"
        self.env = {"FCMCTL_STATE_SHARDS": str(SHARDS)} if sharded else {}
        # A line either way, so both manifests' changes are at the same lines.
        self.state_line = "# state: local, --state"
        self.args = ["--state", str(self.dir / "state.json")]
        if gcs:
            self.env["STORAGE_EMULATOR_HOST"] = gcs.host
            self.state_line = f"state: {{backend: gcs, bucket: fcm, prefix: {name}}}"
            self.args = []

    def manifest(self, devices, rotated=(), observed=()):
        write_manifest(self.path, devices, self.state_line, rotated, observed)

    def fcmctl(self, *args, expect=(0,)):
        result = run([*args, "-f", str(self.path), *self.args], self.emulator, self.env)
        assert result.returncode in expect, f"{args}: exit {result.returncode}\n{result.stdout}\n{result.stderr}"
        return result

    def plan(self, *extra, expect=(0, 2)):
        """The pull request's plan, saved, and its JSON document without what names this state."""
        saved = self.dir / "reviewed.plan"
        result = self.fcmctl("plan", "--refresh=changed", "--detailed-exitcode", "--format", "json", "-out", str(saved), *extra, expect=expect)
        document = json.loads(result.stdout.replace(str(self.dir), "WORLD"))
        for volatile in ("state", "digest", "created_at", "fcmctl_version", "saved_to", "lineage", "serial"):
            document.pop(volatile, None)
        return document, result

    def apply_saved(self):
        result = run(["apply", "--auto-approve", str(self.dir / "reviewed.plan"), *self.args], self.emulator, self.env)
        assert result.returncode == 0, result.stdout + result.stderr
        return result

    def records(self):
        """What the state records, as `state pull` gives it: topic → sorted tokens, and device names."""
        pulled = json.loads(self.fcmctl("state", "pull").stdout)
        tokens = pulled["tokens"]
        topics = {name: sorted(tokens[i] for i in members) for name, members in pulled["topics"].items()}
        return {"topics": topics, "names": pulled.get("device_names"), "applied": pulled.get("applied")}

    def subscriptions(self):
        live = {}
        for i in range(200):
            for rotated in (False, True):
                for topic in self.emulator.request("GET", f"/emulator/v1/registrations/{token(i, rotated)}").get("topics", []):
                    live.setdefault(topic["name"], []).append(token(i, rotated))
        return {topic: sorted(members) for topic, members in live.items()}

    def stop(self):
        self.emulator.stop()


@pytest.fixture(params=["local", "gcs"])
def worlds(request, tmp_path):
    gcs = None
    if request.param == "gcs":
        gcs = FakeGCS()
        gcs.create_bucket("fcm")
    sharded = World(tmp_path, "sharded", True, gcs)
    whole = World(tmp_path, "whole", False)
    yield sharded, whole
    sharded.stop()
    whole.stop()
    if gcs:
        gcs.stop()


def shards_read(result):
    for line in result.stderr.splitlines():
        if line.startswith("Read ") and " of the state's " in line:
            return int(line.split()[1])
    return None


def test_pull_requests_read_only_the_shards_they_touch_and_end_as_a_whole_read_would(worlds):
    sharded, whole = worlds
    devices = start_fleet()
    for world in worlds:
        world.manifest(devices)
        world.fcmctl("apply", "--auto-approve")
    assert sharded.records()["topics"] == whole.records()["topics"]

    def pull_request(devices, rotated=(), extra=(), expect=(0, 2), applies=True, observed=()):
        for world in worlds:
            world.manifest(devices, rotated, observed)
        (sharded_plan, sharded_run), (whole_plan, whole_run) = sharded.plan(*extra, expect=expect), whole.plan(*extra, expect=expect)
        assert sharded_plan == whole_plan, "a plan of the part read is the plan of the whole:\n" + "\n".join(
            f"{key}: {json.dumps(sharded_plan.get(key), sort_keys=True)} != {json.dumps(whole_plan.get(key), sort_keys=True)}"
            for key in sorted(set(sharded_plan) | set(whole_plan)) if sharded_plan.get(key) != whole_plan.get(key))
        assert sharded_run.returncode == whole_run.returncode
        assert shards_read(whole_run) is None, "a single document is read whole"
        if applies and sharded_run.returncode == 2:
            applied = sharded.apply_saved()
            assert shards_read(applied) == shards_read(sharded_run), "the apply reads the shards its plan read"
            whole.apply_saved()
            assert sharded.records() == whole.records(), "the state a partial apply leaves is the one a whole apply leaves"
            assert sharded.subscriptions() == whole.subscriptions()
        return sharded_plan, sharded_run

    # Nothing changed: no shard is read, and the plan is empty.
    plan, result = pull_request(devices)
    assert result.returncode == 0 and shards_read(result) == 0, result.stderr

    # Device 7 joins sports, 9 leaves the fleet, 80 is new, 10 leaves the authoritative alerts: at most four shards.
    devices[7].add("sports")
    del devices[9]
    devices[80] = {"news"}
    devices[10].discard("alerts")
    plan, result = pull_request(devices)
    assert result.returncode == 2 and 1 <= shards_read(result) <= 4, result.stderr
    # 80 declared and device 9, which the state still records.
    assert "Refresh: changed only (4 of 81 registrations" in result.stderr, result.stderr

    # The same manifests again: nothing to read.
    plan, result = pull_request(devices)
    assert result.returncode == 0 and shards_read(result) == 0

    # A token rotated: the device's old and new registrations' shards are read, the rotation is named.
    plan, result = pull_request(devices, rotated={12})
    assert result.returncode == 2 and 1 <= shards_read(result) <= 2
    assert any("device d12 rotated its registration" in note["message"] for note in plan["notes"]), plan["notes"]

    # Device 30 leaves its only topic but stays declared: named, and its removal explained, as a whole read does.
    # Device 31 too, but the pull request excludes that removal by the device's name: the saved plan applies.
    devices[30] = set()
    devices[31] = set()
    plan, result = pull_request(devices, rotated={12}, extra=("--exclude", "topic/news/d31"))
    assert result.returncode == 2
    news = next(c for c in plan["changes"] if c["address"] == "topic/news")
    assert news["removed_devices"] == ["d30"] and news["removed_causes"][0]["cause"] == "member_dropped", news

    # sports becomes observe-only and drops device 3: kept in FCM. Made additive again without it, both states
    # plan its removal (the kept subscription's shard is read).
    del devices[31]
    devices[3].discard("sports")
    plan, result = pull_request(devices, rotated={12}, observed={"sports"})
    plan, result = pull_request(devices, rotated={12})
    sports = next(c for c in plan["changes"] if c["address"] == "topic/sports")
    assert "d3" in sports["removed_devices"], sports

    # A renamed topic (a mistake): every sports subscription goes, in both, explained the same way, refused by
    # --max-removals.
    renamed = {n: {"sport" if t == "sports" else t for t in topics} for n, topics in devices.items()}
    plan, result = pull_request(renamed, rotated={12}, extra=("--max-removals", "3"), expect=(1, 2), applies=False)
    assert shards_read(result) > 4

    # An empty export is refused before anything is read; a truncated one (5 devices left) reads nearly every
    # shard, and both states plan the same removals.
    plan, result = pull_request({}, rotated={12}, expect=(1,), applies=False)
    assert "the manifest declares no groups and no topics" in result.stderr
    truncated = {n: devices[n] for n in sorted(devices)[:5]}
    plan, result = pull_request(truncated, rotated={12}, applies=False)
    assert result.returncode == 2 and shards_read(result) is None or shards_read(result) >= 12, result.stderr
    assert sum(change["counts"]["remove"] for change in plan["changes"]) > 80

    # A plan made, then the state moved on (another apply): the saved plan of the part read is refused as stale.
    devices[20].add("alerts")
    for world in worlds:
        world.manifest(devices, {12})
    sharded.plan()
    devices[21].add("alerts")
    sharded.manifest(devices, {12})
    sharded.fcmctl("apply", "--auto-approve")
    stale = run(["apply", "--auto-approve", str(sharded.dir / "reviewed.plan"), *sharded.args], sharded.emulator, sharded.env)
    assert stale.returncode == 5, stale.stdout + stale.stderr


def test_a_changed_plan_names_the_devices_it_reads_and_finds_a_targeted_device_anywhere(worlds):
    sharded, _ = worlds
    devices = start_fleet()
    sharded.manifest(devices)
    sharded.fcmctl("apply", "--auto-approve")
    devices[7].add("sports")
    devices[40].add("sports")
    sharded.manifest(devices)
    plan, result = sharded.plan()
    assert result.returncode == 2 and shards_read(result) in (1, 2)
    (change,) = plan["changes"]
    assert sorted(change["added_devices"]) == ["d40", "d7"], "the devices read are named"

    # One device's subscription targeted by its name: found whatever shard its records are in.
    plan, result = sharded.plan("--target", "topic/sports/d7")
    assert result.returncode == 2, result.stderr
    assert [c["added_devices"] for c in plan["changes"]] == [["d7"]]
    # A misspelt one is a usage error naming the device meant, before anything is read from FCM.
    refused = sharded.fcmctl("plan", "--refresh=changed", "--target", "topic/sports/d77x", expect=(64,))
    assert "names no device or registration of topic/sports" in refused.stderr, refused.stderr
