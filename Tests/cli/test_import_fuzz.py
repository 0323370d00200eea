"""The import endpoint under fuzz: 1,000 documents made from a real export (seeded, so every run makes the same
ones) by type swaps at every depth, huge and negative numbers, strings in place of objects, deep nesting, groups
of 21-30 members, unknown and uninstalled members, HTML and other invalid topic names, broken times, unknown
fields; and valid variations. Each hostile one is answered 400 naming the field (`groups[3].members: 25 members,
FCM allows at most 20`) and changes nothing; each valid one is imported with the counts it holds and exports back
the same. The emulator stays up throughout. Then the same hostile documents given at start-up through --import
and --state-file: exit 1 with the field, never a signal."""
import copy
import json
import os
import random
import subprocess
import urllib.error
import urllib.request

from fcmharness import EMULATOR, Emulator

SEED = 32
CASES = 1000
MAX_GROUP_ID = 2**53 - 1
PROJECT, SENDER = "fuzz", "4242"
TOKENS = [f"fuzz-{i:02d}:APA91b" + "f" * 24 for i in range(28)]
FIDS = ["cR1rPQ0d5ZtUyf-g8HkL3a", "dX9_aBcDeFgHiJkLmNoPqR"]
GONE = "fuzz-gone:APA91b" + "g" * 24


def post_import(emulator, document=None, data=None):
    data = data if data is not None else json.dumps(document).encode()
    request = urllib.request.Request(emulator.base + "/emulator/v1/import", data=data, method="POST",
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def export(emulator):
    with urllib.request.urlopen(emulator.base + "/emulator/v1/export", timeout=60) as response:
        return response.read()


def alive(emulator):
    with urllib.request.urlopen(emulator.base + "/emulator/v1/health", timeout=30) as response:
        return response.status == 200 and emulator.process.poll() is None


def valid_export():
    """A real export: registrations of both kinds, one uninstalled, subscriptions, a delivered message with
    numbers in it, two groups, a sender link and a fixed clock."""
    emulator = Emulator("--strict-registrations")
    try:
        emulator.request("POST", "/emulator/v1/registrations", {
            "project": PROJECT, "sender_id": SENDER,
            "registrations": [{"token": t, "platform": "IOS" if i % 3 == 0 else "ANDROID", "app": f"com.fuzz.app{i % 4}"}
                              for i, t in enumerate(TOKENS)] + [{"fid": f} for f in FIDS] + [{"token": GONE}]})
        emulator.uninstall(GONE)
        for i, token in enumerate(TOKENS[:10]):
            for topic in ["news", "weather-nyc", f"team_{i % 3}", "a.b~c%2520d"][: 1 + i % 4]:
                emulator.subscribe(PROJECT, token, topic)
        emulator.request("POST", f"/v1/projects/{PROJECT}/messages:send", {
            "message": {"token": TOKENS[0], "notification": {"title": "<b>hi</b>", "body": "x"},
                        "android": {"notification": {"notification_count": 1}}, "data": {"n": "1"}}})
        for name, members in [("family", TOKENS[:3]), ("kiosks", TOKENS[3:8] + FIDS[:1])]:
            emulator.request("POST", "/fcm/notification", {"operation": "create", "notification_key_name": name, "registration_ids": members},
                             headers={"project_id": SENDER})
        emulator.request("PUT", "/emulator/v1/clock", {"now": "2026-06-01"})
        document = json.loads(export(emulator))
    finally:
        emulator.stop()
    assert len(document["registrations"]) == 31 and len(document["groups"]) == 2, document
    assert [r["id"] for r in document["registrations"] if r["inbox"]] == [TOKENS[0]], "one delivered message"
    return document


# ---- paths, as the emulator names them ----

DATA_MAPS = ("senders", "topics")  # objects whose keys are data, named `."key"`


def render(path):
    out = ""
    for index, step in enumerate(path):
        if isinstance(step, int):
            out += f"[{step}]"
        elif index > 0 and isinstance(path[index - 1], str) and path[index - 1] in DATA_MAPS:
            out += "." + json.dumps(step)
        else:
            out += ("." if out else "") + step
    return out


def nodes(value, path=()):
    """Every path in the document, except inside a delivered message (free-form JSON)."""
    yield path
    if len(path) >= 3 and path[-1] == "message" and path[-3] == "inbox":
        return
    if isinstance(value, dict):
        for key, item in value.items():
            yield from nodes(item, path + (key,))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from nodes(item, path + (index,))


def get(document, path):
    for step in path:
        document = document[step]
    return document


def put(document, path, value):
    get(document, path[:-1])[path[-1]] = value


def kind(value):
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "number"
    return {str: "string", type(None): "null", list: "array", dict: "object"}[type(value)]


def deep(depth, leaf=1):
    value = leaf
    for level in range(depth):
        value = [value] if level % 2 else {"d": value}
    return value


SWAPS = ["<script>alert(1)</script>", "", 0, -1, 2**63 - 1, -(2**63), 2**64, 1.5, 1e308, True, False, None, [], [1, "a"], {},
         {"<b>": "x"}, "9223372036854775807", "2030-01-01T00:00:00Z"]


class Case:
    def __init__(self, name, document, prefix=None, phrase=None, data=None):
        self.name, self.document, self.prefix, self.phrase, self.data = name, document, prefix, phrase, data

    @property
    def valid(self):
        return self.prefix is None


def generate(base, rng):
    """One case: a hostile document with the field the emulator must name (and a phrase of its reason), or a
    valid one."""
    doc = copy.deepcopy(base)
    regs, groups = doc["registrations"], doc["groups"]
    r = rng.randrange(len(regs))
    m = next(i for i, x in enumerate(regs) if x["inbox"])  # the registration with a delivered message
    g = rng.randrange(len(groups))
    installed = [x["id"] for x in regs if not x.get("uninstalled")]
    roll = rng.random()

    if roll < 0.40:  # a value of another JSON type anywhere
        paths = [p for p in nodes(doc) if p]
        path = rng.choice(paths)
        original = get(doc, path)
        nested = deep(rng.randrange(20, 400))
        choices = [s for s in SWAPS + [nested] if kind(s) != kind(original)]
        value = rng.choice(choices)
        put(doc, path, copy.deepcopy(value))
        if path == ("clock", "now") and value is None:
            return Case("type swap to null clock", doc)
        if path == ("format",):
            return Case("type swap of format", doc, "", '"format"')
        if path == ("version",):
            return Case("type swap of version", doc, "", "version")
        return Case(f"type swap {kind(original)}->{kind(value)}", doc, render(path) + ":", "expected")

    hostile = [
        ("group id huge", lambda: (groups[g].update(id=rng.choice([2**63 - 1, 2**53, 2**64, 0, -5, -(2**63)])), f"groups[{g}].id:", "out of range")),
        ("group id fraction", lambda: (groups[g].update(id=1.5), f"groups[{g}].id:", "not a whole number")),
        ("next_group_id out of range", lambda: (doc.update(next_group_id=rng.choice([2**63 - 1, 0, -1, 2**53 + 1, 2**64])), "next_group_id:",
                                                "out of range")),
        ("next_group_id not above the ids", lambda: (doc.update(next_group_id=max(x["id"] for x in groups)), "next_group_id:", "above every group")),
        ("too many members", lambda: (groups[g].update(members=installed[: rng.randrange(21, 31)]), f"groups[{g}].members:",
                                      "members, FCM allows at most 20")),
        ("unknown member", lambda: (groups[g]["members"].__setitem__(0, "ghost:APA91b" + "h" * 20), f"groups[{g}].members[0]:",
                                    "not a registration of this export")),
        ("uninstalled member", lambda: (groups[g]["members"].append(GONE), f"groups[{g}].members[{len(groups[g]['members']) - 1}]:", "uninstalled")),
        ("member twice", lambda: (groups[g]["members"].append(groups[g]["members"][0]), f"groups[{g}].members[{len(groups[g]['members']) - 1}]:",
                                  "twice")),
        ("no members", lambda: (groups[g].update(members=[]), f"groups[{g}].members:", "empty")),
        ("group id twice", lambda: (groups[1].update(id=groups[0]["id"]), "groups[1].id:", "also the id of groups[0]")),
        ("group name twice", lambda: (groups[1].update(name=groups[0]["name"], sender_id=groups[0]["sender_id"]), "groups[1]:",
                                      "has a group named")),
        ("group field missing", lambda: (groups[g].pop(rng.choice(["members", "id", "name", "sender_id"])), f"groups[{g}]:", "no \"")),
        ("invalid topic name", lambda: (regs[r].setdefault("topics", {}).__setitem__(
            rng.choice(["<script>alert(1)</script>", "<b>news</b>", "a b", "", "x" * 901, "ünïcode", "news/x", "nul\u0000", "javascript:alert(1)",
                        "\u202etxt", "q?x=1"]), "2026-01-01T00:00:00.000Z"), f"registrations[{r}].topics.", "not a topic name")),
        ("too many topics", lambda: (regs[r].update(topics={f"t{i}": "2026-01-01T00:00:00Z" for i in range(2001)}), f"registrations[{r}].topics:",
                                     "2001 topics, FCM allows at most 2000")),
        ("message not an object", lambda: (regs[m]["inbox"][0].update(message=rng.choice(["text", 5, 2**63 - 1, True, None, [1, 2], ""])),
                                           f"registrations[{m}].inbox[0].message:", "expected an object")),
        ("message field missing", lambda: (regs[m]["inbox"][0].pop(rng.choice(["message", "name", "received_at"])), f"registrations[{m}].inbox[0]:",
                                           "needs name")),
        ("bad topic time", lambda: (regs[r].update(topics={"news": rng.choice(["yesterday", "2026-13-01T00:00:00Z", "2026-01-01", "",
                                                                                 "2026-01-01T00:00:00", "2026-01-01T25:00:00Z", "0000-01-01T00:00:00Z"])}),
                                    f'registrations[{r}].topics."news":', "RFC 3339")),
        ("bad received_at", lambda: (regs[m]["inbox"][0].update(received_at="<i>now</i>"), f"registrations[{m}].inbox[0].received_at:", "RFC 3339")),
        ("bad clock", lambda: (doc["clock"].update(now=rng.choice(["2030-01-01", "soon", ""])), "clock.now:", "RFC 3339")),
        ("malformed id", lambda: (regs[r].update(id=rng.choice(["has space", "", "tab\tid", "x" * 5000, "new\nline"])), f"registrations[{r}].id:",
                                  "is not a registration")),
        ("id twice", lambda: (regs[1].update(id=regs[0]["id"]), "registrations[1].id:", "appears twice")),
        ("unknown kind", lambda: (regs[r].update(kind=rng.choice(["banana", "TOKEN", "<b>fid</b>"])), f"registrations[{r}].kind:", "expected")),
        ("unknown field", lambda: rng.choice([
            lambda: (regs[r].update(topicz={}), f'registrations[{r}]."topicz":', "not a field"),
            lambda: (doc.update(extra=1), '"extra":', "not a field"),
            lambda: (groups[g].update(notification_key="APA91bX"), f'groups[{g}]."notification_key":', "not a field"),
            lambda: (doc["clock"].update(zone="UTC"), 'clock."zone":', "not a field"),
            lambda: (regs[m]["inbox"][0].update(seen=True), f'registrations[{m}].inbox[0]."seen":', "not a field"),
        ])()),
        ("bad sender", lambda: rng.choice([lambda: (doc["senders"].update({"": PROJECT}), 'senders."":', "empty sender"),
                                           lambda: (doc["senders"].update({"7": ""}), 'senders."7":', "empty"),
                                           lambda: (doc["senders"].update({"7": 7}), 'senders."7":', "expected a string")])()),
        ("wrong-typed collection", lambda: rng.choice([lambda: (doc.update(registrations={}), "registrations:", "expected an array"),
                                                       lambda: (doc.update(groups={"a": 1}), "groups:", "expected an array"),
                                                       lambda: (doc.update(senders=[]), "senders:", "expected an object"),
                                                       lambda: (regs[r].update(topics=["news"]), f"registrations[{r}].topics:", "expected an object"),
                                                       lambda: (regs[r].update(inbox={}), f"registrations[{r}].inbox:", "expected an array"),
                                                       lambda: (groups[g].update(members="a"), f"groups[{g}].members:", "expected an array")])()),
        ("string for an object", lambda: rng.choice([lambda: (regs.__setitem__(r, "<script>x</script>"), f"registrations[{r}]:", "expected an object"),
                                                     lambda: (groups.__setitem__(g, "family"), f"groups[{g}]:", "expected an object"),
                                                     lambda: (doc.update(clock="2030"), "clock:", "expected an object"),
                                                     lambda: (regs[m]["inbox"].__setitem__(0, "hi"), f"registrations[{m}].inbox[0]:", "expected an object")])()),
        ("nested deep in a field", lambda: (regs[r].update(platform=deep(rng.randrange(50, 500))), f"registrations[{r}].platform:",
                                            "expected a string")),
    ]
    valid = [
        ("optional fields left out", lambda: [regs[rng.randrange(len(regs))].pop(k, None)
                                               for k in rng.sample(["platform", "app", "kind", "project", "topics", "inbox", "uninstalled"], 3)]),
        ("sections left out", lambda: [doc.pop(k, None) for k in rng.sample(["clock", "senders", "exported_by", "next_group_id"], 2)]),
        ("clock changed", lambda: doc.update(clock={"now": rng.choice([None, "2030-01-01T00:00:00Z", "9999-12-31T23:59:59.999Z"]),
                                                    "new_project": rng.random() < 0.5})),
        ("twenty members", lambda: groups[g].update(members=installed[:20])),
        ("highest group id", lambda: (groups[g].update(id=MAX_GROUP_ID), doc.update(next_group_id=MAX_GROUP_ID + 1))),
        ("HTML in free text", lambda: (regs[r].update(platform="<img src=x onerror=alert(1)>", app="</td><script>1</script>"),
                                       groups[g].update(name="<svg onload=alert(1)>"))),
        ("deep message", lambda: regs[m]["inbox"][0].update(message={"data": deep(rng.randrange(10, 300), leaf=2**63 - 1)})),
        ("2000 topics", lambda: regs[r].update(topics={f"t{i}": "2026-01-01T00:00:00+05:30" for i in range(2000)})),
        ("new registration", lambda: regs.append({"id": f"new-{rng.randrange(10**6)}:APA91b", "topics": {"news": "0001-01-01T00:00:00Z"}})),
    ]
    if roll < 0.88:
        name, make = rng.choice(hostile)
        _, prefix, phrase = make()
        return Case(name, doc, prefix, phrase)
    if roll < 0.90:  # beyond what the JSON parser reads: refused with the parser's position, not a field
        data = b'{"format":"fcm-emulator-export","version":2,"registrations":' + b"[" * 600 + b"]" * 600 + b"}"
        return Case("nested beyond the parser", None, "", "Too many nested arrays or dictionaries", data=data)
    name, make = rng.choice(valid)
    make()
    return Case(name, doc)


def counts(document):
    subscriptions = sum(len(r.get("topics", {})) for r in document["registrations"])
    return {"registrations": len(document["registrations"]), "groups": len(document.get("groups", [])), "subscriptions": subscriptions}


def test_a_thousand_fuzzed_imports_are_refused_by_field_or_imported_and_never_crash():
    base = valid_export()
    rng = random.Random(SEED)
    emulator = Emulator("--strict-registrations")
    tally = {"cases": 0, "refused with the field": 0, "refused at the parser's position": 0, "accepted": 0}
    kinds = {}
    try:
        status, answer = post_import(emulator, base)
        assert status == 200 and answer == counts(base), answer
        before = export(emulator)
        for number in range(CASES):
            case = generate(base, rng)
            kinds[case.name] = kinds.get(case.name, 0) + 1
            status, answer = post_import(emulator, case.document, case.data)
            where = f"case {number} ({case.name})"
            assert emulator.process.poll() is None, f"{where}: the emulator died"
            if case.valid:
                assert status == 200 and answer == counts(case.document), (where, answer)
                again = export(emulator)
                assert post_import(emulator, data=again)[0] == 200 and export(emulator) == again, f"{where}: the export does not read back"
                before = again
                tally["accepted"] += 1
            else:
                message = answer["error"]["message"]
                assert status == 400 and message.startswith("not imported: " + case.prefix), (where, status, message[:300])
                assert case.phrase in message, (where, case.phrase, message[:300])
                assert export(emulator) == before, f"{where}: a refused import changed the state"
                tally["refused at the parser's position" if case.data else "refused with the field"] += 1
            tally["cases"] += 1
        assert alive(emulator)
        tally["crashes"] = 0 if emulator.process.poll() is None else 1
    finally:
        emulator.stop()
    print(f"\nimport fuzz, seed {SEED}: {tally}\n  kinds: {dict(sorted(kinds.items()))}")
    assert tally["cases"] == CASES and tally["accepted"] >= 50 and tally["refused with the field"] >= 800, tally
    assert len(kinds) >= 35, sorted(kinds)


def test_every_group_id_taken_is_an_answer_not_an_overflow():
    base = valid_export()
    base["groups"][0]["id"], base["next_group_id"] = MAX_GROUP_ID, MAX_GROUP_ID + 1
    emulator = Emulator("--strict-registrations")
    try:
        assert post_import(emulator, base)[0] == 200
        try:
            emulator.request("POST", "/fcm/notification", {"operation": "create", "notification_key_name": "one-more", "registration_ids": [TOKENS[20]]},
                             headers={"project_id": SENDER})
            raise AssertionError("a group was created past the highest id")
        except urllib.error.HTTPError as error:
            assert error.code == 500 and "no group id left" in json.loads(error.read())["error"]
        # The group at the highest id still answers to its key.
        key = emulator.request("GET", "/fcm/notification?notification_key_name=" + base["groups"][0]["name"], headers={"project_id": SENDER})
        assert key["notification_key"].startswith("APA91b") and alive(emulator)
    finally:
        emulator.stop()


HOSTILE_FILES = {
    "inbox message a string": lambda d: d["registrations"][0]["inbox"][0].update(message="text"),
    "inbox message a number": lambda d: d["registrations"][0]["inbox"][0].update(message=7),
    "group id 2^63-1": lambda d: d["groups"][1].update(id=2**63 - 1),
    "next_group_id 2^63-1": lambda d: d.update(next_group_id=2**63 - 1),
    "25 members": lambda d: d["groups"][0].update(members=TOKENS[:25]),
    "HTML topic": lambda d: d["registrations"][2]["topics"].update({"<script>alert(1)</script>": "2026-01-01T00:00:00Z"}),
    "unknown member": lambda d: d["groups"][0]["members"].append("ghost:APA91b"),
    "registrations an object": lambda d: d.update(registrations={}),
}
EXPECTED = {
    "inbox message a string": "registrations[0].inbox[0].message: a string, expected an object",
    "inbox message a number": "registrations[0].inbox[0].message: the number 7, expected an object",
    "group id 2^63-1": "groups[1].id: 9223372036854775807 is out of range",
    "next_group_id 2^63-1": "next_group_id: 9223372036854775807 is out of range",
    "25 members": "groups[0].members: 25 members, FCM allows at most 20",
    "HTML topic": 'registrations[2].topics."<script>alert(1)</script>": not a topic name',
    "unknown member": "groups[0].members[3]: \"ghost:APA91b\" is not a registration of this export",
    "registrations an object": "registrations: an object, expected an array",
}


def start(arguments):
    return subprocess.run([EMULATOR, "--port", "0", *arguments], capture_output=True, text=True, timeout=60)


def test_hostile_files_at_start_exit_1_with_the_field_never_a_signal(tmp_path):
    base = valid_export()
    base["registrations"][0]["inbox"] = base["registrations"][0]["inbox"] or [
        {"name": "projects/fuzz/messages/1", "received_at": "2026-01-01T00:00:00Z", "message": {"data": {}}}]
    for number, (name, spoil) in enumerate(HOSTILE_FILES.items()):
        document = copy.deepcopy(base)
        spoil(document)
        directory = tmp_path / f"import-{number}"
        directory.mkdir()
        (directory / "fcm-emulator-export.json").write_text(json.dumps(document))
        state = tmp_path / f"state-{number}.json"
        state.write_text(json.dumps(document))
        for flag, value, where in [("--import", directory, directory / "fcm-emulator-export.json"), ("--state-file", state, state)]:
            result = start([flag, str(value)])
            assert result.returncode == 1, (name, flag, result.returncode, result.stderr[-500:])
            assert "listening" not in result.stdout and f"{flag} {where}: {EXPECTED[name]}" in result.stderr, (name, flag, result.stderr)
            assert "Fatal error" not in result.stderr and "crashed" not in result.stderr, result.stderr
        assert json.loads(state.read_text()) == document, "a refused state file is left as it was"

    # The version 1 format of --state-file (the store's Codable snapshot) is held to the same rules.
    version1 = {"version": 1, "senders": {}, "nextGroupID": 2**63 - 1,
                "registrations": {"a:APA91b": {"kind": "token", "topics": {}, "uninstalled": False, "platform": "ANDROID", "app": "x",
                                               "inbox": [{"name": "m", "receivedAt": "2026-01-01T00:00:00Z", "message": "not json"}]}},
                "groups": [{"name": {"senderId": "1", "name": "g"}, "record": {"id": 2**63 - 1, "members": ["a:APA91b"]}}]}
    for spoil, expected in [(lambda d: None, 'registrations."a:APA91b".inbox[0].message: not the text of a JSON object'),
                            (lambda d: (d["registrations"]["a:APA91b"]["inbox"].clear(), d["groups"][0]["record"].update(id=1)),
                             "nextGroupID: 9223372036854775807 is out of range"),
                            (lambda d: (d["registrations"]["a:APA91b"]["inbox"].clear(), d.update(nextGroupID=2)),
                             "groups[0].record.id: 9223372036854775807 is out of range"),
                            (lambda d: (d["registrations"]["a:APA91b"]["inbox"].clear(), d.update(nextGroupID=2),
                                        d["groups"][0]["record"].update(id=1, members=["a:APA91b", "b:APA91b"])),
                             'groups[0].record.members[1]: "b:APA91b" is not a registration of this export'),
                            ]:
        document = copy.deepcopy(version1)
        spoil(document)
        state = tmp_path / "version1.json"
        state.write_text(json.dumps(document))
        result = start(["--state-file", str(state)])
        assert result.returncode == 1 and f"--state-file {state}: a version 1 state file: {expected}" in result.stderr, result.stderr

    # Not JSON, and nesting beyond the parser: the parser's words.
    for text, expected in [(b"[" * 100000, "not JSON (Too many nested arrays or dictionaries"), (b"\xff\xfe", "not JSON")]:
        state = tmp_path / "garbage.json"
        state.write_bytes(text)
        result = start(["--state-file", str(state)])
        assert result.returncode == 1 and expected in result.stderr, result.stderr[-500:]


def test_flags_and_settings_that_trapped_are_refused_with_the_reason():
    for flags, expected in [(["--error-rate", ":"], "--error-rate: ':' is not"), (["--error-rate", "503=1,:5"], "is not [ENDPOINT:]STATUS=RATE"),
                            (["--latency", "1e300s"], "not a duration from 0 to 10 minutes"), (["--jitter", "nan"], "not a duration")]:
        result = start(flags)
        assert result.returncode > 0 and expected in result.stderr and "Fatal error" not in result.stderr, (flags, result.returncode, result.stderr)
    emulator = Emulator()
    try:
        for path, body, expected in [
            ("/emulator/v1/faults", {"failing_registrations": {"x:APA91b": 5000}}, "status 5000 is out of range"),
            ("/emulator/v1/faults", {"error_rates": [{"status": 99999, "rate": 1}]}, "error_rates[0].status: 99999 is out of range"),
            ("/emulator/v1/faults", {"latency_ms": 1e300}, "latency_ms: 1e+300 is out of range"),
            ("/emulator/v1/faults", {"drop_rate": 7}, "drop_rate: 7.0 is out of range"),
            ("/emulator/v1/faults", {"error_rates": [{"endpoint": "nope", "status": 503, "rate": 1}]}, "is not an endpoint"),
            ("/emulator/v1/quotas", {"subscription_qps": -1}, "must not be negative"),
            ("/emulator/v1/clock", {"now": "99999-01-01"}, "in the years 1 to 9999"),
        ]:
            try:
                emulator.request("PUT", path, body)
                raise AssertionError(f"{path} {body} was taken")
            except urllib.error.HTTPError as error:
                message = json.loads(error.read())["error"]["message"]
                assert error.code == 400 and expected in message, (body, message)
        # A registration the faults still name answers as before: nothing took the refused settings.
        emulator.request("POST", f"/v1/projects/p/registrations/{TOKENS[0]}/topicSubscriptions?topicName=news", {})
        assert alive(emulator) and emulator.request("GET", "/emulator/v1/faults")["failing_registrations"] == {}
    finally:
        emulator.stop()
