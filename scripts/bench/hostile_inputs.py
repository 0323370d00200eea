#!/usr/bin/env python3
"""Does validation stay linear on hostile input? Times `fcmctl validate` on each hostile shape at size N and
2N (CPU time of the child, best of 3) and prints the ratio: at most about 2 means linear.

  python3 scripts/bench/hostile_inputs.py [--build-dir .build/release]
"""
import argparse
import os
import subprocess
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

SHAPES = {
    "duplicate keys": lambda n: "topics:\n" + "  dup: []\n" * n,
    "deep flow nesting (refused at 256)": lambda n: "[" * n + "x" + "]" * n + "\n",
    "long flow list of registrations": lambda n: "project: {id: p, senderId: \"1\"}\ntopics:\n  t: ["
    + ", ".join(f"\"r{i}:APA91b{'x' * 20}\"" for i in range(n)) + "]\n",
    "many anchors and aliases": lambda n: "defs:\n" + "".join(f"  a{i}: &a{i} [x, y]\n" for i in range(n))
    + "uses:\n" + "".join(f"  - *a{i}\n" for i in range(n)),
    "merge keys": lambda n: "base: &b {x: 1, y: 2}\nitems:\n" + "".join(f"  i{i}: {{<<: *b, z: {i}}}\n" for i in range(n)),
}


def cpu(binary, path):
    best = None
    for _ in range(3):
        child = subprocess.Popen([binary, "validate", "-f", path], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        _, _, usage = os.wait4(child.pid, 0)
        seconds = usage.ru_utime + usage.ru_stime
        best = seconds if best is None else min(best, seconds)
    return best


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build-dir", default=os.path.join(ROOT, ".build", "release"))
    parser.add_argument("--size", type=int, default=40_000)
    args = parser.parse_args()
    binary = os.path.join(args.build_dir, "fcmctl")
    with tempfile.TemporaryDirectory() as directory:
        for name, make in SHAPES.items():
            times = []
            for n in (args.size, 2 * args.size):
                path = os.path.join(directory, "case.yaml")
                with open(path, "w") as out:
                    out.write(make(n))
                times.append(cpu(binary, path))
            print(f"{name:38} N={args.size:>7}: {times[0]:6.3f} s   2N: {times[1]:6.3f} s   ratio {times[1] / max(times[0], 1e-6):4.2f}")


if __name__ == "__main__":
    main()
