#!/usr/bin/env python3
"""The whole job at fleet scale: validate -> plan -> apply -> plan at 1,000,000 subscriptions.

Generates the fleet (`generate_fleet.py` defaults: 100,000 devices, 2,000 topics selected by label,
1,000,000 subscriptions, 20,000 groups of 5), starts a release fcm-emulator with no latency and no quota,
and runs the four steps of a pipeline one after the other on one state file. For each step it prints the
exit code, wall time, CPU time (user + system) and peak RSS of the fcmctl process (from wait4), and at the
end the state file's size. Targets (issue 14): apply <= 300 MB, the steady-state plan <= 250 MB, validate
<= 250 MB.

Release build first: make release. Run from the repository root.
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

from benchlib import BUILD, Emulator, generate_fleet, state_bytes


def measure(command, env):
    """Runs one fcmctl step; returns (exit code, wall s, CPU s, peak RSS MiB, tail of its output)."""
    started = time.perf_counter()
    with tempfile.TemporaryFile() as output:
        child = subprocess.Popen(command, stdout=output, stderr=subprocess.STDOUT, env=env)
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.perf_counter() - started
        output.seek(0)
        tail = output.read().decode(errors="replace")[-1500:]
    return os.waitstatus_to_exitcode(status), wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, tail


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--devices", type=int, default=100_000)
    parser.add_argument("--groups", type=int, default=20_000)
    parser.add_argument("--parallelism", type=int, default=512)
    parser.add_argument("--fleet", help="reuse (or keep) the generated fleet in this folder")
    parser.add_argument("--binary", default=os.path.join(BUILD, "fcmctl"), help="the fcmctl to measure (another build, for a before/after)")
    args = parser.parse_args()
    work = tempfile.mkdtemp(prefix="fcmctl-fleet-")
    fleet = args.fleet or os.path.join(work, "fleet")
    if not os.path.isdir(fleet):
        generate_fleet(fleet, "--devices", str(args.devices), "--groups", str(args.groups))
    state = os.path.join(work, "state.json")
    emulator = Emulator()
    fcmctl = args.binary
    common = ["-f", fleet, "--state", state, "--parallelism", str(args.parallelism), "--no-progress"]
    steps = [
        ("validate", [fcmctl, "validate", "-f", fleet], {0}),
        ("plan (first)", [fcmctl, "plan", *common], {0, 2}),
        ("apply", [fcmctl, "apply", "--auto-approve", "--qps", "0", *common], {0}),
        ("plan (steady)", [fcmctl, "plan", "--detailed-exitcode", *common], {0}),
    ]
    print(f"fleet: {fleet} ({args.devices:,} devices, {args.groups:,} groups); fcmctl {fcmctl}")
    print(f"{'step':15} {'exit':>4} {'wall s':>8} {'CPU s':>8} {'peak RSS MiB':>13}")
    failed = False
    try:
        for name, command, expected in steps:
            code, wall, cpu, rss, tail = measure(command, emulator.env)
            print(f"{name:15} {code:>4} {wall:8.1f} {cpu:8.1f} {rss:13.0f}", flush=True)
            if code not in expected:
                print(tail, file=sys.stderr)
                failed = True
                break
        if os.path.exists(state):
            print(f"state: {state_bytes(state) / 1e6:.1f} MB")
    finally:
        emulator.stop()
        if not args.fleet:
            shutil.rmtree(work, ignore_errors=True)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
