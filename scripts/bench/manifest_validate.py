#!/usr/bin/env python3
"""Benchmark: `fcmctl validate` on a fleet-sized manifest, side by side with PyYAML's C loader merely
parsing the same files. Prints wall time, CPU time and peak memory of each (median of --runs), and
the ratio. Build first: make release
"""
import argparse
import glob
import os
import statistics
import subprocess
import sys
import time

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def run_child(command):
    """Runs one command; returns (returncode, stdout, wall s, cpu s, peak RSS MiB) of that child alone."""
    start = time.perf_counter()
    child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    output = child.stdout.read()
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - start
    child.returncode = os.waitstatus_to_exitcode(status)
    return child.returncode, output.decode(), wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


PYYAML_PARSE = """
import glob, sys, yaml
for path in sorted(glob.glob(sys.argv[1] + "/*.yaml")):
    with open(path, "rb") as handle:
        yaml.load(handle, Loader=yaml.CSafeLoader)
"""


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--fleet", default="/tmp/fcmctl-bench-fleet")
    parser.add_argument("--fcmctl", default=os.path.join(ROOT, ".build/release/fcmctl"))
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    if not os.path.isdir(args.fleet):
        subprocess.run([sys.executable, os.path.join(ROOT, "scripts/bench/generate_fleet.py"), "--out", args.fleet], check=True)
    files = glob.glob(args.fleet + "/*.yaml")
    size = sum(os.path.getsize(f) for f in files)
    print(f"fleet: {args.fleet}: {len(files)} files, {size / 1e6:.1f} MB")

    fcmctl, pyyaml = [], []
    for _ in range(args.runs):
        code, output, wall, cpu, rss = run_child([args.fcmctl, "validate", "-f", args.fleet])
        if code != 0:
            print(output)
            sys.exit("fcmctl validate failed")
        fcmctl.append((wall, cpu, rss))
        code, pyout, wall, cpu, rss = run_child([sys.executable, "-c", PYYAML_PARSE, args.fleet])
        if code != 0:
            print(pyout)
            sys.exit("PyYAML parse failed")
        pyyaml.append((wall, cpu, rss))
    print(f"fcmctl says: {output.strip()}")

    def median(rows, i):
        return statistics.median(r[i] for r in rows)

    fw, fc = median(fcmctl, 0), median(fcmctl, 1)
    pw, pc = median(pyyaml, 0), median(pyyaml, 1)
    fm, pm = max(r[2] for r in fcmctl), max(r[2] for r in pyyaml)
    print(f"fcmctl validate (load, resolve, validate): wall {fw:.2f} s, cpu {fc:.2f} s, peak RSS {fm:.0f} MiB")
    print(f"PyYAML CSafeLoader (parse only):          wall {pw:.2f} s, cpu {pc:.2f} s, peak RSS {pm:.0f} MiB")
    print(f"ratio (PyYAML wall / fcmctl wall): {pw / fw:.2f}x; targets: fcmctl <= 3 s, <= 1024 MiB, faster than PyYAML")


if __name__ == "__main__":
    main()
