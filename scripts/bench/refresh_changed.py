#!/usr/bin/env python3
"""`plan --refresh=changed` on a pull request that touches 10 registrations of a 100,000-registration fleet.

Generates the fleet (100,000 devices, 200 topics by site, 100,000 subscriptions, no groups), applies it to
a fresh fcm-emulator (no latency, no quota), then adds a topic for 10 devices (the pull request) and times:
- `plan --refresh=changed`: wall time and the list requests it sent (emulator stats);
- `plan --refresh=all`: the same, for comparison.
Release build first: make release. Run from the repository root.

`--compare DIR --repeat N`: after the fleet is applied, times `plan --refresh=changed` N times with this build
and N times with the fcmctl in DIR (another release build, e.g. of the previous commit in a worktree),
alternating, on the same fleet, state and emulator, and prints each one's median and spread.
"""
import argparse
import json
import os
import subprocess
import tempfile
import time
import urllib.request

from benchlib import BUILD, Emulator, generate_fleet, state_bytes


def stats(base):
    with urllib.request.urlopen(base + "/emulator/v1/stats") as response:
        return json.load(response)


def list_requests(base):
    return stats(base)["endpoints"].get("topics.list", {}).get("requests", 0)


def timed(args, env):
    started = time.monotonic()
    result = subprocess.run(args, capture_output=True, text=True, env=env)
    return time.monotonic() - started, result


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--devices", type=int, default=100_000)
    parser.add_argument("--changed", type=int, default=10)
    parser.add_argument("--compare", help="a directory holding another build's fcmctl, timed alternately with this one")
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    work = tempfile.mkdtemp(prefix="fcmctl-refresh-")
    fleet = os.path.join(work, "fleet")
    generate_fleet(fleet, "--devices", str(args.devices),
         "--sites", "200", "--topics-per-site", "1", "--groups", "0")
    emulator = Emulator()
    try:
        base, env = emulator.base, emulator.env
        fcmctl = os.path.join(BUILD, "fcmctl")
        state = os.path.join(work, "state.json")
        common = ["-f", fleet, "--state", state, "--qps", "0"]
        seconds, applied = timed([fcmctl, "apply", "--auto-approve"] + common, env)
        assert applied.returncode == 0, applied.stderr
        print(f"apply of the fleet: {seconds:.1f} s; state {state_bytes(state) / 1e6:.1f} MB")

        with open(os.path.join(fleet, "pr.yaml"), "w") as out:
            out.write("topics:\n  pr-canary:\n    members:\n")
            for i in range(args.changed):
                out.write(f"      - kiosk-{i * 997 % args.devices:06d}\n")

        if args.compare:
            compare(args, [("this build", fcmctl), (args.compare, os.path.join(args.compare, "fcmctl"))], common, env)
            return
        for mode in ("changed", "all"):
            before = list_requests(base)
            seconds, plan = timed([fcmctl, "plan", f"--refresh={mode}", "--format", "json"] + common, env)
            assert plan.returncode == 0, plan.stderr
            document = json.loads(plan.stdout)
            added = document["summary"]["subscriptions_to_add"]
            print(
                f"plan --refresh={mode}: {seconds:.2f} s wall, {list_requests(base) - before} list requests, "
                f"{document['refresh']['registrations_read']} of {document['refresh']['registrations_known']} registrations read, "
                f"{added} subscriptions to add")
    finally:
        emulator.stop()


def compare(args, builds, common, env):
    import statistics

    # A build that cannot read this one's state format (an index and shards, format 5) plans on the same
    # records as one document, which `state pull` prints: each build reads the format it would have written.
    state = common[common.index("--state") + 1]
    single = state + ".document.json"
    pulled = subprocess.run([builds[0][1], "state", "pull", "--state", state], capture_output=True, env=env, check=True)
    with open(single, "wb") as out:
        out.write(pulled.stdout)
    probe = subprocess.run([builds[1][1], "state", "list", "--state", state], capture_output=True, env=env)
    other = common if probe.returncode == 0 else [single if arg == state else arg for arg in common]
    arguments = {builds[0][0]: common, builds[1][0]: other}
    times = {name: [] for name, _ in builds}
    for _ in range(args.repeat):
        for name, binary in builds:
            seconds, plan = timed([binary, "plan", "--refresh=changed", "--format", "json"] + arguments[name], env)
            assert plan.returncode == 0, plan.stderr
            times[name].append(seconds)
    for name, samples in times.items():
        print(
            f"plan --refresh=changed with {name}: median {statistics.median(samples):.3f} s "
            f"(min {min(samples):.3f}, max {max(samples):.3f}, {len(samples)} runs)")


if __name__ == "__main__":
    main()
