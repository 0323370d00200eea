#!/usr/bin/env python3
"""Writes a fleet-sized manifest directory for benchmarks (deterministic for a given --seed).

Default size: 100,000 devices with labels, 2,000 topics selected by label (1,000,000 resolved
subscriptions: each of 200 sites has 500 devices and 10 topics), and 20,000 device groups of 5 members.
Files are in fcmctl's canonical form (`fcmctl fmt`), split as a team would split them.
"""
import argparse
import os
import random
import string


def token(rng, index):
    alphabet = string.ascii_letters + string.digits + "-_"
    instance = "".join(rng.choice(alphabet) for _ in range(11))
    return f"{instance}:APA91b" + "".join(rng.choice(alphabet) for _ in range(134)) + f"{index:06d}"


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", required=True)
    parser.add_argument("--devices", type=int, default=100_000)
    parser.add_argument("--sites", type=int, default=200)
    parser.add_argument("--topics-per-site", type=int, default=10)
    parser.add_argument("--groups", type=int, default=20_000)
    parser.add_argument("--group-size", type=int, default=5)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    os.makedirs(args.out, exist_ok=True)

    with open(os.path.join(args.out, "project.yaml"), "w") as out:
        out.write('apiVersion: fcmctl/v1\nproject:\n  id: fleet-bench\n  senderId: "100000000001"\n')

    names = [f"kiosk-{i:06d}" for i in range(args.devices)]
    per_file = 1000
    for start in range(0, args.devices, per_file):
        with open(os.path.join(args.out, f"devices-{start // per_file:03d}.yaml"), "w") as out:
            out.write("devices:\n")
            for i in range(start, min(start + per_file, args.devices)):
                out.write(f"  {names[i]}:\n    token: {token(rng, i)}\n    labels:\n")
                out.write(f"      model: m{i % 7}\n      site: s{i % args.sites:03d}\n")

    with open(os.path.join(args.out, "topics.yaml"), "w") as out:
        out.write("topics:\n")
        for site in range(args.sites):
            for n in range(args.topics_per_site):
                out.write(f"  site-s{site:03d}-channel-{n}:\n    members:\n      selector:\n        site: s{site:03d}\n")

    groups_per_file = 1000
    for start in range(0, args.groups, groups_per_file):
        with open(os.path.join(args.out, f"groups-{start // groups_per_file:03d}.yaml"), "w") as out:
            out.write("groups:\n")
            for g in range(start, min(start + groups_per_file, args.groups)):
                out.write(f"  user-{g:06d}:\n    members:\n")
                first = (g * args.group_size) % args.devices
                for member in sorted(names[(first + k) % args.devices] for k in range(args.group_size)):
                    out.write(f"      - {member}\n")


if __name__ == "__main__":
    main()
