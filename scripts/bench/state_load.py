#!/usr/bin/env python3
"""State size and load time at fleet scale (release build; run from the repository root).

Writes a state of 100,000 registrations (FCM-token-sized, 158 characters) subscribed to 2,000 topics,
1,000,000 subscriptions in all, in fcmctl's format version 2 and in the old version 1, then times
`fcmctl state list` (read, replay, list: the cost every command pays to load the state) on each, best of
five runs, and `state pull` (read and write back).

Build first: make release
"""
import os
import random
import string
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FCMCTL = os.path.join(ROOT, ".build/release/fcmctl")


def tokens(count, rng):
    alphabet = string.ascii_letters + string.digits + "-_"
    return sorted(f"{''.join(rng.choice(alphabet) for _ in range(11))}:APA91b{''.join(rng.choice(alphabet) for _ in range(140))}{i}"[:158]
                  for i in range(count))


def write_v2(path, regs, topics):
    with open(path, "w") as out:
        out.write('{\n"version": 2,\n"lineage": "bench",\n"serial": 1,\n"tokens": [\n')
        out.write(",\n".join(f'  "{t}"' for t in regs))
        out.write('\n],\n"fids": [],\n"groups": {},\n"topics": {\n')
        out.write(",\n".join(f'  "topic-{name}": [{",".join(map(str, members))}]' for name, members in topics))
        out.write("\n}\n}\n")


def write_v1(path, regs, topics):
    with open(path, "w") as out:
        out.write('{\n  "groups" : {\n\n  },\n  "lineage" : "bench",\n  "serial" : 1,\n  "topics" : {\n')
        parts = []
        for name, members in topics:
            body = ",\n".join(f'      {{\n        "token" : "{regs[i]}"\n      }}' for i in members)
            parts.append(f'    "topic-{name}" : [\n{body}\n    ]')
        out.write(",\n".join(parts))
        out.write('\n  },\n  "version" : 1\n}\n')


def best_of(command, runs=5):
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        result = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        times.append(time.perf_counter() - start)
        if result.returncode != 0:
            sys.exit(f"{' '.join(command)} failed: {result.stderr}")
    return min(times)


def main():
    rng = random.Random(7)
    regs = tokens(100_000, rng)
    topics = [(t, sorted(rng.sample(range(len(regs)), 500))) for t in range(2000)]
    directory = tempfile.mkdtemp()
    for version, writer in (("2", write_v2), ("1", write_v1)):
        path = os.path.join(directory, f"v{version}", "state.json")
        os.makedirs(os.path.dirname(path))
        writer(path, regs, topics)
        size = os.path.getsize(path)
        seconds = best_of([FCMCTL, "state", "list", "--state", path])
        print(f"format version {version}: {size / 1e6:6.1f} MB; state list (load) best of 5: {seconds:.3f} s")
        if version == "2":
            pulled = best_of([FCMCTL, "state", "pull", "--state", path], runs=3)
            print(f"format version 2: state pull (load and encode) best of 3: {pulled:.3f} s")


if __name__ == "__main__":
    main()
