#!/usr/bin/env python3
"""Benchmarks of fcmctl's FCM client against fcm-emulator (release builds; run from the repository root).

  quota    100,000 v1 subscription changes through `fcmctl apply`, emulator with 50 ms latency and its
           3,000/s quota: duration of the apply phase, share of the quota, share of requests answered 429.
  sdk      1,000, 20,000 and 100,000 changes (--sizes), no latency, no quota, side by side with the official
           firebase-admin Python SDK's subscribe_to_topic: wall-clock and CPU time of each client process.
           --topics-per-device N (default 10) sets the fleet's shape for sdk and cpu: N topics per device, 1 for one.
  refresh  `fcmctl plan` reading the subscriptions of 100,000 registrations (v1 list), 50 ms latency. With
           --compare OTHER_FCMCTL, that build too, alternating, --runs of each: the median of each.
  wall     the same changes with --qps 100000 against the 3,000/s quota (50 ms): failed operations, share of 429s.
  scattered  5 % 429 and 10 % 503 at random, 20 ms latency, --qps 2500: changes per second.
  mixed-errors  10,000 changes (1,000 registrations x 10 topics), 10 % of creates answered 429 and 20 % 503 at
           random, the emulator's 3,000/s quota, --qps 2500: wall time, exit code, changes held, and the lowest
           attempt and change rate of any whole second after the first (sampled from the emulator's stats). A
           binary without --timeout is stopped after --limit seconds (default 180) and counted as it stands.
  paced    CPU of the same apply paced at --qps 2900 against unpaced, no latency, no quota.
  cpu      fcmctl's CPU per change for the same 100,000 changes (or each of --sizes; no latency, no quota), best
           of --runs, for this build and, with --compare OTHER_FCMCTL, another build alternating in the same run
           (a before/after of a change: build the older commit into its own folder first). With
           --compare-env NAME=VALUE the compared run is this build (or OTHER_FCMCTL) with that variable set,
           e.g. FCMCTL_CURL_LOOP=poll for the portable event loop against epoll.

Build first: make release
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FCMCTL = os.path.join(ROOT, ".build/release/fcmctl")
EMULATOR = os.path.join(ROOT, ".build/release/fcm-emulator")


def generate(out, devices, sites, topics_per_site):
    if not os.path.isdir(out):
        subprocess.run([sys.executable, os.path.join(ROOT, "scripts/bench/generate_fleet.py"), "--out", out, "--devices", str(devices),
                        "--sites", str(sites), "--topics-per-site", str(topics_per_site), "--groups", "0"], check=True)
    return out


class Emulator:
    def __init__(self, *flags):
        self.directory = tempfile.mkdtemp()
        self.account = os.path.join(self.directory, "sa.json")
        self.process = subprocess.Popen([EMULATOR, "--port", "0", "--service-account-out", self.account, "--request-log-limit", "0", "--auto-register", *flags],
                                        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        line = self.process.stdout.readline()
        assert line.startswith("fcm-emulator listening on http://"), line
        self.host = line.strip().split("http://")[1]

    def stats(self):
        return json.load(urllib.request.urlopen(f"http://{self.host}/emulator/v1/stats"))

    def stop(self):
        self.process.terminate()
        self.process.wait()


def run(command, env):
    """Runs a process; returns (returncode, output, wall seconds, cpu seconds)."""
    start = time.perf_counter()
    child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env={**os.environ, **env})
    output = child.stdout.read().decode()
    _, status, usage = os.wait4(child.pid, 0)
    return os.waitstatus_to_exitcode(status), output, time.perf_counter() - start, usage.ru_utime + usage.ru_stime


def figure(pattern, text):
    match = re.search(pattern, text)
    return float(match.group(1)) if match else float("nan")


def quota(args):
    fleet = generate("/tmp/fcmctl-bench-100k", 10_000, 10, 10)
    emulator = Emulator("--latency", "50ms")
    try:
        state = os.path.join(emulator.directory, "state.json")
        code, output, wall, cpu = run([FCMCTL, "apply", "--auto-approve", "--verbose", "-f", fleet, "--state", state,
                                       "--parallelism", str(args.parallelism), "--qps", str(args.qps)], {"FCM_EMULATOR_HOST": emulator.host})
        if code != 0:
            sys.exit(output)
        statuses = emulator.stats()["endpoints"].get("topics.create", {}).get("by_status", {})
        created = emulator.stats()["subscriptions"]
    finally:
        emulator.stop()
    seconds = figure(r"Applied \d+ subscription changes in ([\d.]+) s", output)
    requests = sum(statuses.values())
    refused = statuses.get("429", 0)
    print(f"quota: {created} subscriptions held; apply phase {seconds:.2f} s = {100_000 / seconds:.0f} changes/s "
          f"= {100_000 / seconds / 3000 * 100:.1f}% of the 3,000/s quota (target >= 90%, <= 37 s)")
    print(f"quota: {requests} create requests, {refused} answered 429 = {refused / max(requests, 1) * 100:.2f}% (target < 1%)")
    print(f"quota: whole run {wall:.2f} s wall (including the refresh of 10,000 registrations), fcmctl CPU {cpu:.2f} s")
    print(f"quota: settings --parallelism {args.parallelism} --qps {args.qps}")


def apply_phase(args, emulator_flags, qps, name):
    """The 100,000 changes through `fcmctl apply --qps QPS` against an emulator started with the flags."""
    fleet = generate("/tmp/fcmctl-bench-100k", 10_000, 10, 10)
    emulator = Emulator(*emulator_flags)
    try:
        state = os.path.join(emulator.directory, "state.json")
        code, output, wall, cpu = run([FCMCTL, "apply", "--auto-approve", "--verbose", "-f", fleet, "--state", state,
                                       "--parallelism", str(args.parallelism), "--qps", str(qps)], {"FCM_EMULATOR_HOST": emulator.host})
        statuses = emulator.stats()["endpoints"].get("topics.create", {}).get("by_status", {})
        held = emulator.stats()["subscriptions"]
    finally:
        emulator.stop()
    seconds = figure(r"Applied \d+ subscription changes in ([\d.]+) s", output)
    failed = figure(r"(\d+) failed", output)
    requests = sum(statuses.values())
    refused = statuses.get("429", 0)
    print(f"{name}: exit {code}; {held} subscriptions held; {failed:.0f} failed operations; apply phase {seconds:.2f} s = "
          f"{100_000 / seconds:.0f} changes/s; {requests} create requests, {refused} answered 429 = {refused / max(requests, 1) * 100:.2f}%, "
          f"503: {statuses.get('503', 0)}; whole run {wall:.2f} s wall, fcmctl CPU {cpu:.2f} s = {cpu / 100_000 * 1e6:.1f} us/change")
    return cpu


def wall(args):
    """--qps far above the emulator's 3,000/s quota (50 ms latency): the limiter must find the wall."""
    apply_phase(args, ["--latency", "50ms"], 100_000, "wall (--qps 100000, quota 3000/s; targets: exit 0, 0 failed, < 5% 429)")


def scattered(args):
    """5 % of requests answered 429 and 10 % 503 at random, 20 ms latency, --qps 2500."""
    apply_phase(args, ["--latency", "20ms", "--error-rate", "503=0.10,429=0.05"], 2500,
                "scattered (--qps 2500, 429=5%, 503=10%, 20 ms; target >= 1,500 changes/s)")


def mixed_errors(args):
    """10 % 429 + 20 % 503 on creates: the limiter must treat them as noise and back-pressure, not as a wall to
    keep cutting at."""
    fleet = generate("/tmp/fcmctl-bench-10k", 1_000, 10, 10)
    binary = args.compare or FCMCTL
    emulator = Emulator("--error-rate", "topics.create:429=0.1,topics.create:503=0.2")
    try:
        state = os.path.join(emulator.directory, "state.json")
        command = [binary, "apply", "--auto-approve", "--verbose", "-f", fleet, "--state", state, "--qps", "2500"]
        start = time.perf_counter()
        # The output goes to a file: a plan of 10,000 lines fills a pipe nobody reads until the end.
        log = tempfile.TemporaryFile()
        child = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env={**os.environ, "FCM_EMULATOR_HOST": emulator.host})
        samples = []  # (seconds, create requests, subscriptions held), once a second
        while child.poll() is None and time.perf_counter() - start < args.limit:
            stats = emulator.stats()
            samples.append((time.perf_counter() - start, stats["endpoints"].get("topics.create", {}).get("requests", 0), stats["subscriptions"]))
            time.sleep(1)
        stopped = child.poll() is None
        if stopped:
            child.kill()
        child.wait()
        log.seek(0)
        output = log.read().decode()
        wall_seconds = time.perf_counter() - start
        stats = emulator.stats()
        held = stats["subscriptions"]
        statuses = stats["endpoints"].get("topics.create", {}).get("by_status", {})
    finally:
        emulator.stop()
    # Rates over whole seconds while the bulk was sent: from the first create until 90 % were held (after that
    # only the retries of the unlucky few are left, waiting out their backoff, and a second's count says nothing
    # about the limiter).
    bulk = [(b[1] - a[1], b[2] - a[2]) for a, b in zip(samples, samples[1:]) if a[1] > 0 and b[2] < 9_000]
    low_attempts = min((r[0] for r in bulk), default=0)
    low_changes = min((r[1] for r in bulk), default=0)

    def reached(count):
        return next((f"{t:.0f} s" for t, _, held_then in samples if held_then >= count), "never")

    outcome = f"killed after {args.limit:.0f} s" if stopped else f"exit {child.returncode}"
    print(f"mixed-errors ({os.path.relpath(binary, ROOT)}): {outcome}; {held} of 10000 changes held after {wall_seconds:.1f} s "
          f"(90 % at {reached(9_000)}, 99 % at {reached(9_900)}); create answers {sum(statuses.values())} "
          f"(429: {statuses.get('429', 0)}, 503: {statuses.get('503', 0)}); lowest whole second of the bulk: {low_attempts} attempts/s, "
          f"{low_changes} changes/s (a tenth of the 3,000/s quota is 300)")
    for line in output.splitlines():
        if line.startswith(("Applied ", "Apply ", "Requests: ")) or "--timeout" in line:
            print(f"  {line}")


def paced(args):
    """CPU per change of a paced apply against the unpaced one (no latency, no quota)."""
    unpaced = apply_phase(args, ["--subscription-qps", "0"], 0, "paced (--qps 0)")
    paced_cpu = apply_phase(args, ["--subscription-qps", "0"], 2900, "paced (--qps 2900)")
    print(f"paced: the paced apply uses {(paced_cpu / unpaced - 1) * 100:+.1f}% CPU against the unpaced one (target: no more)")


SDK_SCRIPT = """
import json, sys, warnings
import firebase_admin, google.auth.credentials
from firebase_admin import credentials, messaging
google.auth.credentials.CredentialsWithRegionalAccessBoundary._is_regional_access_boundary_lookup_required = lambda self: False
base, account, plan = sys.argv[1], sys.argv[2], json.load(open(sys.argv[3]))
app = firebase_admin.initialize_app(credentials.Certificate(account))
service = messaging._get_messaging_service(app)
project = app.project_id
service._fcm_topic_url = f"{base}/v1/projects/{project}/registrations"
failures = 0
for topic, tokens in plan.items():
    for start in range(0, len(tokens), 1000):
        failures += messaging.subscribe_to_topic(tokens[start:start + 1000], topic, app=app).failure_count
print("failures", failures)
"""


def fleet_for(args, size):
    """The fleet of `size` changes: --topics-per-device topics each (10 sites, one topic per site and slot)."""
    per_device = args.topics_per_device
    devices = size // per_device
    suffix = "" if per_device == 10 else f"-{per_device}t"
    return generate(f"/tmp/fcmctl-bench-sdk-{devices}{suffix}", devices, 10, per_device), devices


def sdk_run(args, size):
    """One size: fcmctl apply and firebase-admin's subscribe_to_topic, each on its own fresh emulator."""
    fleet, devices = fleet_for(args, size)
    # The same (token, topic) pairs fcmctl applies, read back from the generated files.
    import yaml
    tokens, topics = {}, {}
    for name in sorted(os.listdir(fleet)):
        document = yaml.load(open(os.path.join(fleet, name)), Loader=yaml.CSafeLoader)
        tokens.update(document.get("devices", {}))
        topics.update(document.get("topics", {}))
    plan = {topic: [d["token"] for d in tokens.values() if d["labels"]["site"] == spec["members"]["selector"]["site"]] for topic, spec in topics.items()}
    plan_file = os.path.join(tempfile.mkdtemp(), "plan.json")
    json.dump(plan, open(plan_file, "w"))
    changes = sum(len(v) for v in plan.values())

    emulator = Emulator("--subscription-qps", "0")
    try:
        state = os.path.join(emulator.directory, "state.json")
        code, output, f_wall, f_cpu = run([FCMCTL, "apply", "--auto-approve", "--verbose", "-f", fleet, "--state", state,
                                           "--parallelism", str(args.parallelism), "--qps", "0"], {"FCM_EMULATOR_HOST": emulator.host})
        if code != 0 or emulator.stats()["subscriptions"] != changes:
            sys.exit(output)
    finally:
        emulator.stop()
    emulator = Emulator("--subscription-qps", "0")
    try:
        code, output, s_wall, s_cpu = run([sys.executable, "-W", "ignore", "-c", SDK_SCRIPT, f"http://{emulator.host}", emulator.account, plan_file], {})
        if code != 0 or "failures 0" not in output or emulator.stats()["subscriptions"] != changes:
            sys.exit(output)
    finally:
        emulator.stop()
    return changes, f_wall, f_cpu, s_wall, s_cpu


def sdk(args):
    """fcmctl's whole `apply` process (manifest load, refresh, state writes included) against the SDK's
    process, at each size, in one run."""
    print(f"sdk: {'changes':>8} | {'fcmctl wall':>11} {'CPU':>7} {'us/chg':>7} | {'SDK wall':>9} {'CPU':>8} {'us/chg':>7} | {'wall x':>7} {'CPU x':>6}")
    for size in args.sizes or [1_000, 20_000, 100_000]:
        changes, f_wall, f_cpu, s_wall, s_cpu = sdk_run(args, size)
        print(f"sdk: {changes:>8} | {f_wall:10.2f}s {f_cpu:6.2f}s {f_cpu / changes * 1e6:7.1f} | {s_wall:8.2f}s {s_cpu:7.2f}s "
              f"{s_cpu / changes * 1e6:7.1f} | {s_wall / f_wall:6.1f}x {s_cpu / f_cpu:5.1f}x", flush=True)
    print("sdk: targets: faster wall time and >= 20x less CPU per change at every size (firebase-admin "
          f"{firebase_admin_version()}, --parallelism {args.parallelism}, {args.topics_per_device} topics per device, no latency, no quota)")


def firebase_admin_version():
    try:
        from importlib.metadata import version
        return version("firebase-admin")
    except Exception:
        return "?"


def refresh(args):
    fleet = generate("/tmp/fcmctl-bench-refresh", 100_000, 100, 1)
    binaries = [("this build", FCMCTL)] + ([("compared", args.compare)] if args.compare else [])
    results = {name: [] for name, _ in binaries}
    for _ in range(args.runs if args.compare else 1):
        for name, binary in binaries:
            emulator = Emulator("--latency", "50ms")
            try:
                state = os.path.join(emulator.directory, "state.json")
                code, output, wall, cpu = run([binary, "plan", "--verbose", "-f", fleet, "--state", state, "--parallelism", str(args.parallelism)],
                                              {"FCM_EMULATOR_HOST": emulator.host})
                if code not in (0, 2):
                    sys.exit(output)
            finally:
                emulator.stop()
            seconds = figure(r"in ([\d.]+) s \(\d+ registrations/s\)", output)
            results[name].append((100_000 / seconds, cpu))
            print(f"refresh: {name}: 100,000 registrations listed in {seconds:.2f} s = {100_000 / seconds:.0f} registrations/s (target >= 2,000/s); "
                  f"whole plan {wall:.2f} s wall, CPU {cpu:.2f} s; --parallelism {args.parallelism}")
    if args.compare:
        for name, samples in results.items():
            rates, cpus = sorted(s[0] for s in samples), sorted(s[1] for s in samples)
            print(f"refresh: {name:10} median of {len(samples)}: {median(rates):.0f} registrations/s (runs: {', '.join(f'{r:.0f}' for r in rates)}), "
                  f"CPU {median(cpus):.2f} s")
        mine, other = median([s[0] for s in results["this build"]]), median([s[0] for s in results["compared"]])
        print(f"refresh: this build lists {(mine / other - 1) * 100:+.1f}% registrations/s against the compared build (medians)")


def median(values):
    values = sorted(values)
    middle = len(values) // 2
    return values[middle] if len(values) % 2 else (values[middle - 1] + values[middle]) / 2


def cpu(args):
    for size in args.sizes or [100_000]:
        cpu_size(args, size)


def cpu_size(args, size):
    fleet, _ = fleet_for(args, size)
    compared = args.compare or (FCMCTL if args.compare_env else None)
    extra = dict(setting.split("=", 1) for setting in args.compare_env)
    binaries = [("this build", FCMCTL, {})] + ([("compared", compared, extra)] if compared else [])
    results = {name: [] for name, _, _ in binaries}
    for _ in range(args.runs):
        for name, binary, environment in binaries:
            emulator = Emulator("--subscription-qps", "0")
            try:
                state = os.path.join(emulator.directory, "state.json")
                code, output, wall, used = run([binary, "apply", "--auto-approve", "-f", fleet, "--state", state,
                                                "--parallelism", str(args.parallelism), "--qps", "0"], {"FCM_EMULATOR_HOST": emulator.host, **environment})
                if code != 0 or emulator.stats()["subscriptions"] != size:
                    sys.exit(output)
            finally:
                emulator.stop()
            results[name].append((used, wall))
    for name, samples in results.items():
        used, wall = min(samples)
        print(f"cpu: {size} changes, {name:10} best of {args.runs}: CPU {used:6.3f} s = {used / size * 1e6:6.1f} us/change, wall {wall:6.2f} s")
        per_change = sorted(u / size * 1e6 for u, _ in samples)
        print(f"cpu: {size} changes, {name:10} median of {args.runs}: {median(per_change):6.1f} us/change "
              f"(runs: {', '.join(f'{p:.1f}' for p in per_change)}), wall {median([w for _, w in samples]):6.2f} s")
    if compared:
        mine, other = min(results["this build"])[0], min(results["compared"])[0]
        print(f"cpu: {size} changes: this build uses {(mine / other - 1) * 100:+.1f}% CPU per change against the compared build")
        mine, other = median([u for u, _ in results["this build"]]), median([u for u, _ in results["compared"]])
        print(f"cpu: {size} changes: medians: this build uses {(mine / other - 1) * 100:+.1f}% CPU per change against the compared build")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("which", nargs="*", default=["quota", "sdk", "refresh"])
    parser.add_argument("--parallelism", type=int, default=512)
    parser.add_argument("--qps", type=float, default=2900)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--compare", help="another fcmctl binary, for `cpu` and `refresh` (and, for `mixed-errors`, the one measured)")
    parser.add_argument("--limit", type=float, default=180, help="mixed-errors: seconds before a run is stopped")
    parser.add_argument("--build-dir", help="where fcmctl and fcm-emulator are (default .build/release)")
    parser.add_argument("--compare-env", action="append", default=[], metavar="NAME=VALUE",
                        help="environment of the compared `cpu` run (this build unless --compare)")
    parser.add_argument("--sizes", type=lambda text: [int(v) for v in text.split(",")],
                        help="changes per `sdk` or `cpu` run, comma-separated (multiples of 10; sdk: 1000,20000,100000, cpu: 100000)")
    parser.add_argument("--topics-per-device", type=int, default=10,
                        help="sdk and cpu: topics each device is declared in (default 10; 1 gives one topic per device)")
    args = parser.parse_args()
    if args.build_dir:
        global FCMCTL, EMULATOR
        FCMCTL = os.path.abspath(os.path.join(args.build_dir, "fcmctl"))
        EMULATOR = os.path.abspath(os.path.join(args.build_dir, "fcm-emulator"))
    for name in args.which:
        {"quota": quota, "sdk": sdk, "refresh": refresh, "cpu": cpu, "wall": wall, "scattered": scattered, "paced": paced,
         "mixed-errors": mixed_errors}[name](args)


if __name__ == "__main__":
    main()
