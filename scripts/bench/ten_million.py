#!/usr/bin/env python3
"""Issue 35's target scale: a device export of 10,000,000 devices, 3 topics each by label (30,000,000
subscriptions), and a pull request that changes 10 of them.

1. Generates, streaming, into --workdir (kept and reused when its parameters match):
   base/fcmctl.yaml, base/devices.jsonl   the fleet as applied: one JSON Lines device per line (~160-byte FCM
                                          token, name, labels country/language/tier...), and a manifest whose
                                          topics select by label: label KEY: VALUE -> additive topic KEY-VALUE
   change/fcmctl.yaml, change/devices.jsonl   the pull request: --changed devices gain the label beta: "yes",
                                          which the topic beta-yes selects (one more subscription each)
2. Writes the state an apply of base/ leaves (state/state.json) with `fcm-bench-state`, fcmctl's own state
   code (StateFileFormat through the local store), not with 30,000,000 requests; checks it with `fcmctl
   state list` (topic count, and the members of the first device's topics against the generated ones).
3. Starts a release fcm-emulator as strict as FCM (unknown registrations are UNREGISTERED) holding only the
   registrations the change touches, subscribed as the state says.
4. Measures on change/, one step after the other (--steps): `fcmctl validate`, `fcmctl plan
   --refresh=changed -out reviewed.plan`, and `fcmctl apply reviewed.plan`, what a pipeline applies on merge
   (`apply` without a saved plan has no --refresh=changed: it reads every registration from FCM). Plan and
   apply run on a copy of the generated state, put back before each run.

How each figure is measured:
- wall: monotonic clock around the process; cpu: user + system from wait4's rusage of the fcmctl process;
  peak RSS: wait4's ru_maxrss (the kernel's high-water mark of the process).
- limits: a poller reads /proc/PID/status (VmHWM) every 0.2 s; a step above --limit-gb of RSS or over
  --timeout-min is killed and recorded as "did not finish" with the peak the kernel reported at the stop.
- state bytes read/written: a second run of the step under `strace -f --seccomp-bpf -y` tracing read,
  write, pread64, pwrite64, readv and writev (the returned byte counts, summed per file: the state file and
  its temporary twin, its serial record, lock and journal; device files and manifests apart). Timing comes
  from the untraced run only. Also the state file's size, and whether it was replaced (inode, size, mtime).
- requests: the emulator's own counts (GET /emulator/v1/stats) before and after each step.

`--smoke` (1,000 devices by default) also applies base/ for real to an --auto-register emulator and checks
that the state it writes has the same records as the generated one (lineage, serial and checksum aside),
and checks every topic's members with `state list`; it exits non-zero on any mismatch.

Release build first: swift build -c release --static-swift-stdlib (fcmctl, fcm-emulator, fcm-bench-state).
Run from anywhere: python3 scripts/bench/ten_million.py --devices 1000000 --workdir /tmp/tm-1m --json out.json
"""
import argparse
import base64
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import BUILD, ROOT  # noqa: E402

PROJECT = "ten-million-bench"
SENDER = "100000000035"
# One label per topic a device is in; values are topics of their own. Sizes are a consumer app's.
LABELS = [
    ("country", ["ar", "at", "au", "be", "bg", "br", "ca", "ch", "cl", "cn", "co", "cz", "de", "dk", "eg", "es", "fi", "fr", "gb", "gr",
                 "hk", "hu", "id", "ie", "il", "in", "it", "jp", "kr", "mx", "my", "ng", "nl", "no", "nz", "ph", "pl", "pt", "ro", "se"]),
    ("language", ["ar", "de", "en", "es", "fr", "hi", "id", "it", "ja", "ko", "nl", "pl", "pt", "tr", "zh"]),
    ("tier", ["family", "free", "plus", "pro"]),
    ("platform", ["android", "ios", "web"]),
    ("interest", ["cooking", "finance", "music", "news", "sport", "travel"]),
]
CHANGE_LABEL = ("beta", "yes")
GENERATOR_VERSION = 1  # bump when the generated files change, so old workdirs are regenerated
LINES_PER_CHUNK = 100_000


def fcmctl():
    return os.path.join(BUILD, "fcmctl")


# --- generation --------------------------------------------------------------------------------------------


def changed_indices(devices, changed):
    """Spread over the file, as a nightly export's changes are."""
    return sorted({(j * devices) // changed + devices // (2 * changed) for j in range(changed)})


def manifest(labels, with_change):
    lines = ["apiVersion: fcmctl/v1", "project:", f"  id: {PROJECT}", f'  senderId: "{SENDER}"', "defaults:", "  ownership: additive",
             "deviceFiles: [devices.jsonl]", "topics:"]
    topics = [(key, value) for key, values in labels for value in values]
    if with_change:
        topics.append(CHANGE_LABEL)
    for key, value in sorted(topics, key=lambda kv: f"{kv[0]}-{kv[1]}"):
        lines += [f"  {key}-{value}:", "    ownership: additive", "    members:", "      selector:", f'        {key}: "{value}"']
    return "\n".join(lines) + "\n"


def token_hash(token):
    """64 bits that are stable across processes (the checks run in later ones), cheap at 10,000,000 calls."""
    data = token.encode()
    return zlib.crc32(data) << 32 | zlib.adler32(data)


def generate(workdir, devices, topics_per_device, changed, seed):
    """Writes base/ and change/ in one streaming pass; returns what the checks need (per-topic counts and an
    order-free sum of member hashes, and the first and the changed devices)."""
    labels = LABELS[:topics_per_device]
    width = len(labels)
    rng = random.Random(seed)
    picked = set(changed_indices(devices, changed))
    for side in ("base", "change"):
        os.makedirs(os.path.join(workdir, side), exist_ok=True)
        with open(os.path.join(workdir, side, "fcmctl.yaml"), "w") as out:
            out.write(manifest(labels, side == "change"))
    # A device's labels are `width` random bytes; per distinct combination (2,400 for three labels) its text
    # and topics are made once, and counts and hash sums are kept per combination, not per device and topic.
    combos = {}
    combo_counts, combo_sums = {}, {}
    # Each label's byte is reduced to a value position first (at C speed, one slice per label): keyed by the raw
    # bytes, ten million devices made ten million combinations (5 GB) instead of 2,400.
    tables = [bytes(byte % len(options) for byte in range(256)) for _, options in labels]

    def combo(key):
        if key not in combos:
            values = [(name, options[position]) for position, (name, options) in zip(key, labels)]
            combos[key] = (", ".join(f'"{name}": "{value}"' for name, value in values), sorted(f"{name}-{value}" for name, value in values))
        return combos[key]

    first = None
    changed_devices = []
    with open(os.path.join(workdir, "base", "devices.jsonl"), "w") as base, open(os.path.join(workdir, "change", "devices.jsonl"), "w") as change:
        for start in range(0, devices, LINES_PER_CHUNK):
            count = min(LINES_PER_CHUNK, devices - start)
            # 111 random bytes are 148 base64url characters: an 11-character instance id and 134 of payload,
            # then the device's index for uniqueness: 160 characters, the size of a real FCM token.
            text = base64.urlsafe_b64encode(rng.randbytes(count * 111)).decode()
            drawn = rng.randbytes(count * width)
            reduced = bytearray(drawn)
            for n, table in enumerate(tables):
                reduced[n::width] = drawn[n::width].translate(table)
            choices = bytes(reduced)
            lines = []
            for k in range(count):
                i = start + k
                offset = k * 148
                token = f"{text[offset:offset + 11]}:APA91b{text[offset + 11:offset + 145]}{i:08d}"
                key = choices[k * width:k * width + width]
                label_text = combos[key][0] if key in combos else combo(key)[0]
                lines.append(f'{{"name": "user-{i:08d}", "token": "{token}", "labels": {{{label_text}}}}}\n')
                data = token.encode()
                combo_counts[key] = combo_counts.get(key, 0) + 1
                combo_sums[key] = combo_sums.get(key, 0) + (zlib.crc32(data) << 32 | zlib.adler32(data))
                if i == 0:
                    first = {"name": f"user-{i:08d}", "token": token, "topics": combos[key][1]}
            base.write("".join(lines))
            for i in sorted(picked):
                if start <= i < start + count:
                    line = lines[i - start]
                    lines[i - start] = line[:-3] + f', "{CHANGE_LABEL[0]}": "{CHANGE_LABEL[1]}"}}}}\n'
                    changed_devices.append({"name": f"user-{i:08d}", "token": json.loads(line)["token"],
                                            "topics": combos[choices[(i - start) * width:(i - start + 1) * width]][1]})
            change.write("".join(lines))
    counts, sums = {}, {}
    for key, number in combo_counts.items():
        for topic in combos[key][1]:
            counts[topic] = counts.get(topic, 0) + number
            sums[topic] = (sums.get(topic, 0) + combo_sums[key]) % (1 << 64)
    return {"counts": counts, "sums": {k: str(v) for k, v in sums.items()}, "first": first, "changed": changed_devices}


def prepare(args):
    """Generated inputs and state, reused when the workdir holds them for the same parameters."""
    parameters = {"devices": args.devices, "topics_per_device": args.topics_per_device, "changed": args.changed, "seed": args.seed,
                  "generator": GENERATOR_VERSION}
    meta_path = os.path.join(args.workdir, "meta.json")
    state = os.path.join(args.workdir, "state", "state.json")
    meta = None
    if os.path.exists(meta_path):
        with open(meta_path) as f:
            meta = json.load(f)
        if meta.get("parameters") != parameters or not os.path.exists(state):
            meta = None
    if meta is not None:
        log(f"reusing {args.workdir} (generated {meta['parameters']['devices']:,} devices)")
        return meta
    shutil.rmtree(args.workdir, ignore_errors=True)
    os.makedirs(args.workdir)
    started = time.monotonic()
    facts = generate(args.workdir, args.devices, args.topics_per_device, args.changed, args.seed)
    generated = time.monotonic() - started
    log(f"generated {args.devices:,} devices in {generated:.1f} s "
        f"({os.path.getsize(os.path.join(args.workdir, 'base', 'devices.jsonl')) / 1e6:,.0f} MB per device file)")
    os.makedirs(os.path.dirname(state), mode=0o700)
    result = measure([os.path.join(BUILD, "fcm-bench-state"), "--devices", os.path.join(args.workdir, "base", "devices.jsonl"),
                      "--project", PROJECT, "--sender-id", SENDER, "--state", state], limits=None)
    if result["exit"] != 0:
        sys.exit(f"fcm-bench-state failed: {result['output']}")
    log(f"state written by fcm-bench-state in {result['wall_s']:.1f} s, peak {result['peak_rss_mib']:,.0f} MiB: "
        f"{state_size(state) / 1e6:,.1f} MB")
    meta = {"parameters": parameters, "facts": facts, "generation_s": round(generated, 1),
            "state_generation": {k: result[k] for k in ("wall_s", "cpu_s", "peak_rss_mib")}, "state_checked": False}
    with open(meta_path, "w") as f:
        json.dump(meta, f)
    return meta


# --- measurement -------------------------------------------------------------------------------------------


def log(text):
    print(text, file=sys.stderr, flush=True)


def measure(command, env=None, limits=(20.0, 30.0), stdout_path=None):
    """Runs one process; wall, CPU and peak RSS from wait4, killed past `limits` (GB of RSS, minutes)."""
    started = time.monotonic()
    output = tempfile.TemporaryFile()
    stdout = open(stdout_path, "wb") if stdout_path else output
    child = subprocess.Popen(command, stdout=stdout, stderr=output, env=env)
    stopped = {}
    peak_polled = [0]

    def watch():
        status_path = f"/proc/{child.pid}/status"
        while child.returncode is None:
            try:
                with open(status_path) as f:
                    fields = dict(line.split(":", 1) for line in f if ":" in line)
                hwm = int(fields.get("VmHWM", "0 kB").split()[0]) * 1024
            except (OSError, ValueError):
                return
            peak_polled[0] = max(peak_polled[0], hwm)
            if limits and hwm > limits[0] * 1e9:
                stopped["reason"] = f"peak RSS above {limits[0]:g} GB"
            elif limits and time.monotonic() - started > limits[1] * 60:
                stopped["reason"] = f"over {limits[1]:g} min"
            if "reason" in stopped:
                stopped["peak_rss_mib"] = hwm / 2**20
                stopped["after_s"] = time.monotonic() - started
                child.send_signal(signal.SIGKILL)
                return
            time.sleep(0.2)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    wall = time.monotonic() - started
    watcher.join()
    if stdout_path:
        stdout.close()
    output.seek(0)
    text = output.read().decode(errors="replace")
    output.close()
    result = {"exit": child.returncode, "wall_s": round(wall, 2), "cpu_s": round(usage.ru_utime + usage.ru_stime, 2),
              "user_s": round(usage.ru_utime, 2), "sys_s": round(usage.ru_stime, 2), "peak_rss_mib": round(usage.ru_maxrss / 1024, 1),
              "output": text[-3000:]}
    if stopped:
        result["did_not_finish"] = (f"{stopped['reason']}: killed after {stopped['after_s']:.0f} s at a peak RSS of "
                                    f"{stopped['peak_rss_mib']:,.0f} MiB")
    elif child.returncode < 0:
        result["did_not_finish"] = f"killed by signal {-child.returncode} (out of memory?) at a peak RSS of {usage.ru_maxrss / 1024:,.0f} MiB"
    return result


STRACE_LINE = re.compile(r"^(?:\[pid\s+)?(\d+)\]?\s+(.*)$")
SYSCALL = re.compile(r"^(read|write|pread64|pwrite64|readv|writev)\((\d+)(?:<([^>]*)>)?.*?(<unfinished \.\.\.>|\)\s+=\s+(-?\d+).*)$")
RESUMED = re.compile(r"^<\.\.\. (read|write|pread64|pwrite64|readv|writev) resumed>.*\)\s+=\s+(-?\d+)")


def traced_bytes(command, env, state_path, workdir):
    """Bytes read and written per file class, from strace's record of every read/write-family call."""
    if not shutil.which("strace"):
        return {"error": "strace not installed"}
    with tempfile.NamedTemporaryFile(suffix=".strace") as trace:
        traced = ["strace", "-f", "--seccomp-bpf", "-qq", "-e", "signal=none", "-e", "trace=read,write,pread64,pwrite64,readv,writev",
                  "-y", "-s", "0", "-o", trace.name, *command]
        result = measure(traced, env=env, limits=None)
        totals = {}
        unfinished = {}
        state_dir = os.path.dirname(os.path.realpath(state_path))
        state_name = os.path.basename(state_path)

        def classify(path):
            if not path:
                return "other"
            if path.startswith(state_dir + "/"):
                name = os.path.basename(path)
                for suffix, kind in ((".journal", "state journal"), (".serial", "state serial record"), (".lock", "state lock")):
                    if name.startswith(state_name + suffix):
                        return kind
                return "state"
            if path.startswith(os.path.realpath(workdir) + "/") and path.endswith(".jsonl"):
                return "device files"
            if path.endswith(".yaml"):
                return "manifests"
            if path.startswith(("socket:", "TCP", "UDP", "UNIX", "pipe:", "anon_inode:")):
                return "sockets and pipes"
            if path.startswith("/dev/"):
                return "terminal and /dev"
            return "other files"

        with open(trace.name, errors="replace") as lines:
            for raw in lines:
                match = STRACE_LINE.match(raw.rstrip("\n"))
                if not match:
                    continue
                pid, rest = match.groups()
                call = SYSCALL.match(rest)
                if call:
                    name, _, path, pending, returned = call.groups()
                    if pending.startswith("<unfinished"):
                        unfinished[pid] = (name, path)
                        continue
                else:
                    resumed = RESUMED.match(rest)
                    if not resumed or pid not in unfinished:
                        continue
                    name, path = unfinished.pop(pid)
                    returned = resumed.group(2)
                count = int(returned)
                if count <= 0:
                    continue
                direction = "read" if name in ("read", "pread64", "readv") else "written"
                key = classify(path)
                totals.setdefault(key, {"read": 0, "written": 0})[direction] += count
        return {"exit": result["exit"], "bytes": totals}


class Emulator:
    """A release fcm-emulator as strict as FCM: a registration nobody registered is UNREGISTERED."""

    def __init__(self):
        self.process = subprocess.Popen(
            [os.path.join(BUILD, "fcm-emulator"), "--host", "127.0.0.1", "--port", "0", "--subscription-qps", "0", "--request-log-limit", "0"],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        line = self.process.stdout.readline()
        if not line.startswith("fcm-emulator listening on http://"):
            sys.exit(f"the emulator did not start: {line!r}")
        self.base = line.strip().split(" on ")[1]
        self.env = {**os.environ, "FCM_EMULATOR_HOST": self.base[len("http://"):]}
        for name in ("NO_COLOR", "GITHUB_STEP_SUMMARY"):
            self.env.pop(name, None)

    def request(self, method, path, body=None):
        data = json.dumps(body).encode() if body is not None else None
        headers = {"Content-Type": "application/json", "Authorization": "Bearer owner"}
        with urllib.request.urlopen(urllib.request.Request(self.base + path, data=data, method=method, headers=headers)) as response:
            text = response.read()
            return json.loads(text) if text else {}

    def seed(self, devices):
        """Only the registrations the change touches, subscribed as the state records them."""
        self.request("POST", "/emulator/v1/reset", {})
        self.request("POST", "/emulator/v1/registrations",
                     {"project": PROJECT, "sender_id": SENDER, "registrations": [{"token": d["token"]} for d in devices]})
        for device in devices:
            for topic in device["topics"]:
                self.subscribe(device["token"], topic)

    def subscribe(self, token, topic):
        self.request("POST", f"/v1/projects/{PROJECT}/registrations/{urllib.parse.quote(token, safe=':')}/topicSubscriptions?topicName={topic}", {})

    def topics_of(self, token):
        answer = self.request("GET", f"/emulator/v1/registrations/{urllib.parse.quote(token, safe=':')}")
        return sorted(t["name"] for t in answer.get("topics", []))

    def stats(self):
        return self.request("GET", "/emulator/v1/stats")

    def stop(self):
        self.process.terminate()
        self.process.wait(timeout=30)


def request_counts(before, after):
    counts = {}
    for endpoint, figures in after.get("endpoints", {}).items():
        made = figures.get("requests", 0) - before.get("endpoints", {}).get(endpoint, {}).get("requests", 0)
        if made:
            counts[endpoint] = made
    return counts


def state_size(path):
    """The state's bytes: the file, and for a sharded state (docs/state.md) the shards its index names."""
    folder = path + ".shards"
    shards = sum(entry.stat().st_size for entry in os.scandir(folder)) if os.path.isdir(folder) else 0
    return os.path.getsize(path) + shards


def file_identity(path):
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    return {"inode": st.st_ino, "size": state_size(path), "mtime_ns": st.st_mtime_ns}


# --- checks ------------------------------------------------------------------------------------------------


def check_state(args, meta, state):
    """`fcmctl state list`: the topic list, and the members of the first device's topics."""
    facts = meta["facts"]
    problems = []
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "GITHUB_STEP_SUMMARY", "FCM_EMULATOR_HOST")}
    with tempfile.NamedTemporaryFile() as out:
        listed = measure([fcmctl(), "state", "list", "--state", state], env=env, limits=(args.limit_gb, args.timeout_min), stdout_path=out.name)
        if "did_not_finish" in listed or listed["exit"] != 0:
            return [f"state list did not finish: {listed.get('did_not_finish') or listed['output'][-500:]}"], listed
        topics = [line.strip() for line in open(out.name) if line.strip()]
    expected = sorted(f"topic/{t}" for t in facts["counts"])
    if topics != expected:
        problems.append(f"state list shows {len(topics)} topics, the fleet has {len(expected)}")
    # Every topic in smoke mode; at scale the first device's topics (each a few hundred thousand members).
    check = sorted(facts["counts"]) if args.smoke else facts["first"]["topics"]
    with tempfile.NamedTemporaryFile() as out:
        members = measure([fcmctl(), "state", "list", "--state", state, "--show-tokens", *[f"topic/{t}" for t in check]], env=env,
                          limits=(args.limit_gb, args.timeout_min), stdout_path=out.name)
        if members["exit"] != 0:
            return problems + [f"state list topic/… failed: {members.get('did_not_finish') or members['output'][-500:]}"], listed
        counts, sums, first_in = {}, {}, set()
        with open(out.name) as lines:
            for line in lines:
                _, topic, token = line.rstrip("\n").split("/", 2)
                counts[topic] = counts.get(topic, 0) + 1
                sums[topic] = (sums.get(topic, 0) + token_hash(token)) % (1 << 64)
                if token == facts["first"]["token"]:
                    first_in.add(topic)
    for topic in check:
        if counts.get(topic) != facts["counts"][topic] or str(sums.get(topic)) != facts["sums"][topic]:
            problems.append(f"topic/{topic}: the state lists {counts.get(topic, 0)} members, the fleet has {facts['counts'][topic]} "
                            f"(or other ones)")
    if sorted(first_in) != sorted(facts["first"]["topics"]):
        problems.append(f"{facts['first']['name']} is recorded in {sorted(first_in)}, declared in {facts['first']['topics']}")
    return problems, listed


def check_against_real_apply(args, state):
    """Smoke mode: a real apply of base/ must leave the records the generator wrote."""
    emulator = subprocess.Popen(
        [os.path.join(BUILD, "fcm-emulator"), "--host", "127.0.0.1", "--port", "0", "--subscription-qps", "0", "--auto-register"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        base = emulator.stdout.readline().strip().split(" on ")[1]
        env = {**os.environ, "FCM_EMULATOR_HOST": base[len("http://"):]}
        with tempfile.TemporaryDirectory() as directory:
            applied = os.path.join(directory, "state.json")
            run = subprocess.run([fcmctl(), "apply", "-f", os.path.join(args.workdir, "base"), "--state", applied, "--auto-approve", "--qps", "0"],
                                 capture_output=True, text=True, env=env)
            if run.returncode != 0:
                return [f"the real apply failed: {run.stderr[-1000:]}"]
            documents = []
            for path in (state, applied):
                pulled = subprocess.run([fcmctl(), "state", "pull", "--state", path], capture_output=True, text=True, env=env)
                if pulled.returncode != 0:
                    return [f"state pull {path}: {pulled.stderr[-500:]}"]
                document = json.loads(pulled.stdout)
                for volatile in ("lineage", "serial", "checksum", "merged_runs"):
                    document.pop(volatile, None)
                documents.append(document)
            if documents[0] != documents[1]:
                differing = sorted(k for k in set(documents[0]) | set(documents[1]) if documents[0].get(k) != documents[1].get(k))
                return [f"the generated state differs from a real apply's in {differing}"]
    finally:
        emulator.terminate()
        emulator.wait(timeout=30)
    return []


# --- the steps ---------------------------------------------------------------------------------------------


def run_steps(args, meta):
    state = os.path.join(args.workdir, "state", "state.json")
    change = os.path.join(args.workdir, "change")
    changed = meta["facts"]["changed"]
    saved_plan = os.path.join(args.workdir, "reviewed.plan")
    if os.path.exists(saved_plan):
        os.remove(saved_plan)
    # Plan and apply run on a copy of the generated state, put back before each run: apply replaces it.
    run_state = os.path.join(args.workdir, "run", "state.json")
    plan_command = [fcmctl(), "plan", "-f", change, "--state", run_state, "--refresh=changed", "--format", "json", "-out", saved_plan]
    steps = {}
    emulator = Emulator()
    try:
        for step in args.steps:
            log(f"{step}…")
            if step == "validate":
                command = [fcmctl(), "validate", "-f", change]
                target_state = None
            elif step == "plan":
                target_state = run_state
                command = plan_command
            else:
                # What a pipeline applies on merge: the reviewed plan. `apply` without a file has no
                # --refresh=changed; it reads every registration from FCM (ten million requests here).
                target_state = run_state
                if not os.path.exists(saved_plan):
                    put_back_state(state, run_state)
                    emulator.seed(changed)
                    made = measure(plan_command, env=emulator.env, limits=(args.limit_gb, args.timeout_min), stdout_path=os.devnull)
                    if not os.path.exists(saved_plan):
                        steps[step] = {"did_not_finish": "no saved plan to apply: " + (made.get("did_not_finish") or made["output"][-500:])}
                        log(summary_line(step, steps[step]))
                        continue
                command = [fcmctl(), "apply", "--state", target_state, "--qps", "0", "--auto-approve", saved_plan]

            def reset():
                if step != "validate":
                    put_back_state(state, run_state)
                    emulator.seed(changed)

            reset()
            before_state = file_identity(target_state) if target_state else None
            before_stats = emulator.stats()
            with tempfile.NamedTemporaryFile() as out:
                result = measure(command, env=emulator.env, limits=(args.limit_gb, args.timeout_min), stdout_path=out.name)
                stdout = open(out.name, errors="replace").read()
            result["requests"] = request_counts(before_stats, emulator.stats())
            result["command"] = " ".join(command)
            if target_state:
                after_state = file_identity(target_state)
                result["state_bytes"] = before_state["size"]
                result["state_bytes_after"] = after_state["size"] if after_state else None
                result["state_replaced"] = before_state != after_state
            if "did_not_finish" not in result:
                result["checks"] = check_step(step, result, stdout, emulator, changed)
                if args.strace and target_state:
                    reset()
                    result["traced"] = traced_bytes(command, emulator.env, target_state, args.workdir)
            steps[step] = result
            log(summary_line(step, result))
    finally:
        emulator.stop()
    return steps


def put_back_state(state, run_state):
    shutil.rmtree(os.path.dirname(run_state), ignore_errors=True)
    shutil.copytree(os.path.dirname(state), os.path.dirname(run_state))


def check_step(step, result, stdout, emulator, changed):
    problems = []
    if step == "validate" and result["exit"] != 0:
        problems.append(f"validate exited {result['exit']}: {result['output'][-500:]}")
    if step == "plan":
        if result["exit"] not in (0, 2):
            return [f"plan exited {result['exit']}: {result['output'][-500:]}"]
        document = json.loads(stdout)
        summary = document.get("summary", {})
        if summary.get("subscriptions_to_add") != len(changed) or summary.get("subscriptions_to_remove", 0) != 0:
            problems.append(f"plan: {summary}, expected {len(changed)} subscriptions to add and none to remove")
        result["refresh"] = document.get("refresh")
    if step == "apply":
        if result["exit"] != 0:
            return [f"apply exited {result['exit']}: {result['output'][-500:]}"]
        for device in changed:
            topics = emulator.topics_of(device["token"])
            if topics != sorted(device["topics"] + [f"{CHANGE_LABEL[0]}-{CHANGE_LABEL[1]}"]):
                problems.append(f"after apply, {device['name']} is in {topics}")
    return problems


def size(count):
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if count >= scale:
            return f"{count / scale:,.2f} {unit}"
    return f"{count} B"


def summary_line(step, result):
    if "did_not_finish" in result:
        return f"{step}: did not finish: {result['did_not_finish']}"
    return (f"{step}: exit {result['exit']}, {result['wall_s']:.2f} s wall, {result['cpu_s']:.2f} s CPU, "
            f"{result['peak_rss_mib']:,.0f} MiB peak")


def print_table(args, meta, steps):
    state = os.path.join(args.workdir, "state", "state.json")
    print(f"\n{args.devices:,} devices, {args.topics_per_device} topics each by label "
          f"({args.devices * args.topics_per_device:,} subscriptions), {args.changed} changed; {os.path.relpath(BUILD, ROOT)}")
    print(f"device file {size(os.path.getsize(os.path.join(args.workdir, 'change', 'devices.jsonl')))}, "
          f"state {size(state_size(state))}; state read and written: strace of a second run of the step")
    print(f"{'step':9} {'exit':>4} {'wall s':>9} {'cpu s':>9} {'peak MiB':>9} {'state read':>11} {'state written':>14} FCM requests")
    for step, r in steps.items():
        if "did_not_finish" in r:
            print(f"{step:9} did not finish: {r['did_not_finish']}")
            continue
        traced = "bytes" in r.get("traced", {})
        state_io = r.get("traced", {}).get("bytes", {}).get("state", {})
        read = size(state_io.get("read", 0)) if traced else "-"
        written = size(state_io.get("written", 0)) if traced else "-"
        requests = ", ".join(f"{k} {v}" for k, v in sorted(r.get("requests", {}).items())) or "none"
        print(f"{step:9} {r['exit']:>4} {r['wall_s']:>9.2f} {r['cpu_s']:>9.2f} {r['peak_rss_mib']:>9,.0f} {read:>11} {written:>14} {requests}")
        for problem in r.get("checks", []):
            print(f"          CHECK FAILED: {problem}")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--devices", type=int)
    parser.add_argument("--topics-per-device", type=int, default=3, choices=range(1, len(LABELS) + 1))
    parser.add_argument("--changed", type=int, default=10)
    parser.add_argument("--workdir", help="generated inputs and state, reused when present (default: a temporary directory)")
    parser.add_argument("--steps", default="validate,plan,apply")
    parser.add_argument("--json", help="write the results here")
    parser.add_argument("--seed", type=int, default=35)
    parser.add_argument("--limit-gb", type=float, default=20.0, help="kill a step whose RSS passes this (default 20)")
    parser.add_argument("--timeout-min", type=float, default=30.0, help="kill a step running longer (default 30)")
    parser.add_argument("--no-strace", dest="strace", action="store_false", help="skip the traced runs that count state bytes")
    parser.add_argument("--no-state-check", dest="state_check", action="store_false", help="skip `state list` of the generated state")
    parser.add_argument("--smoke", action="store_true", help="small, and checked against a real apply; exits 1 on any mismatch")
    args = parser.parse_args()
    args.devices = args.devices or (1000 if args.smoke else 10_000_000)
    args.steps = [s for s in args.steps.split(",") if s]
    if any(s not in ("validate", "plan", "apply") for s in args.steps):
        parser.error("--steps takes validate, plan and apply")
    if not 0 < args.changed <= args.devices:
        parser.error("--changed must be between 1 and --devices")
    temporary = None
    if not args.workdir:
        temporary = args.workdir = tempfile.mkdtemp(prefix="fcmctl-ten-million-")
    try:
        meta = prepare(args)
        state = os.path.join(args.workdir, "state", "state.json")
        problems = []
        state_check = None
        if args.state_check and (args.smoke or not meta.get("state_checked")):
            problems, listed = check_state(args, meta, state)
            state_check = {k: listed.get(k) for k in ("wall_s", "cpu_s", "peak_rss_mib", "did_not_finish") if k in listed}
            state_check["problems"] = problems
            log(f"state list of the generated state: {'ok' if not problems else problems}")
            if not problems:
                meta["state_checked"] = True
                with open(os.path.join(args.workdir, "meta.json"), "w") as f:
                    json.dump(meta, f)
        if args.smoke:
            problems += check_against_real_apply(args, state)
            log(f"generated state against a real apply: {'same records' if not problems else problems}")
        steps = run_steps(args, meta)
        print_table(args, meta, steps)
        for step in steps.values():
            if "did_not_finish" not in step and step["exit"] == 0:
                del step["output"]
            problems += step.get("checks", [])
        if args.json:
            document = {
                "parameters": {"devices": args.devices, "topics_per_device": args.topics_per_device, "changed": args.changed, "seed": args.seed,
                               "limit_gb": args.limit_gb, "timeout_min": args.timeout_min},
                "build": BUILD,
                "fcmctl_version": subprocess.run([fcmctl(), "version"], capture_output=True, text=True).stdout.strip(),
                "device_file_bytes": os.path.getsize(os.path.join(args.workdir, "change", "devices.jsonl")),
                "state_file_bytes": state_size(state),
                "generation_s": meta["generation_s"],
                "state_generation": meta["state_generation"],
                "state_check": state_check,
                "steps": steps,
                "problems": problems,
            }
            with open(args.json, "w") as out:
                json.dump(document, out, indent=2, sort_keys=True)
                out.write("\n")
        if problems:
            print("\nPROBLEMS:\n" + "\n".join(f"- {p}" for p in problems))
            sys.exit(1)
    finally:
        if temporary:
            shutil.rmtree(temporary, ignore_errors=True)


if __name__ == "__main__":
    main()
