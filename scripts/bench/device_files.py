#!/usr/bin/env python3
"""Benchmark: the same 100,000-device fleet declared in YAML, in a JSON Lines device file and in a CSV device
file: `fcmctl validate` and `fcmctl plan` (against a release fcm-emulator in --auto-register mode, every
device in one topic of the manifest, nothing applied) for each. Prints the median wall time, CPU time and
peak memory of --runs. Build first: swift build -c release
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import BUILD, Emulator  # noqa: E402

PROJECT = 'project: {id: bench, senderId: "1"}\n'


def write_fleet(directory, devices, form):
    os.makedirs(directory, exist_ok=True)
    names = [f"kiosk-{i:06d}" for i in range(devices)]
    tokens = [f"k{i:06d}:APA91b" + format(i * 7919 % 10**12, "012d") * 10 for i in range(devices)]
    topic = "topics:\n  fleet:\n    members:\n" + "".join(f"      - {n}\n" for n in names)
    with open(os.path.join(directory, "fcmctl.yaml"), "w") as manifest:
        if form == "yaml":
            manifest.write(PROJECT + "devices:\n")
            for name, token in zip(names, tokens):
                manifest.write(f"  {name}:\n    token: \"{token}\"\n    labels: {{site: s{hash(name) % 50}}}\n")
        else:
            manifest.write(PROJECT + f"deviceFiles: [fleet.{form}]\n")
        manifest.write(topic)
    if form == "jsonl":
        with open(os.path.join(directory, "fleet.jsonl"), "w") as out:
            for name, token in zip(names, tokens):
                out.write(json.dumps({"name": name, "token": token, "labels": {"site": f"s{hash(name) % 50}"}}) + "\n")
    elif form == "csv":
        with open(os.path.join(directory, "fleet.csv"), "w") as out:
            out.write("name,token,labels.site\n")
            for name, token in zip(names, tokens):
                out.write(f"{name},{token},s{hash(name) % 50}\n")


def timed(command, env=None):
    start = time.perf_counter()
    child = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    error = child.stderr.read()
    _, status, usage = os.wait4(child.pid, 0)
    code = os.waitstatus_to_exitcode(status)
    return code, error.decode(), time.perf_counter() - start, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--devices", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    fcmctl = os.path.join(BUILD, "fcmctl")
    os.environ["PYTHONHASHSEED"] = "0"
    with tempfile.TemporaryDirectory() as root:
        results = {}
        for form in ("yaml", "jsonl", "csv"):
            directory = os.path.join(root, form)
            write_fleet(directory, args.devices, form)
            size = sum(os.path.getsize(os.path.join(directory, f)) for f in os.listdir(directory))
            emulator = Emulator()
            try:
                for command in ("validate", "plan"):
                    samples = []
                    for run in range(args.runs):
                        extra = ["--state", os.path.join(root, f"{form}-{run}.json")] if command == "plan" else []
                        code, error, wall, cpu, rss = timed([fcmctl, command, "-f", directory, *extra], env=emulator.env)
                        if code not in (0, 2):
                            sys.exit(f"{form} {command} exited {code}: {error[-2000:]}")
                        samples.append((wall, cpu, rss))
                    results[(form, command)] = [statistics.median(s[i] for s in samples) for i in range(3)]
            finally:
                emulator.stop()
            print(f"{form}: {size / 1e6:.1f} MB", flush=True)
        print(f"\n{args.devices} devices, one topic with all of them; median of {args.runs} runs (release build)")
        print(f"{'source':8} {'command':9} {'wall s':>8} {'cpu s':>8} {'peak MiB':>9}")
        for (form, command), (wall, cpu, rss) in results.items():
            print(f"{form:8} {command:9} {wall:8.2f} {cpu:8.2f} {rss:9.0f}")


if __name__ == "__main__":
    main()
