#!/usr/bin/env python3
"""The pull-request Markdown of a 1,000,000-change plan, through the real binary.

Generates the fleet (100,000 devices, 2,000 topics, 1,000,000 subscriptions; no groups unless --groups;
--devices and --sites shrink it: 5,000 and 10 give 50,000 subscriptions), plans it against an empty
fcm-emulator with `--format markdown` and `--json-into`, and reports the Markdown's size against the
60,000-character budget, whether cmark-gfm (GitHub's renderer) renders it with balanced <details>, the
summary at the top and the omission line at the end, and the wall time and peak RSS.

--removals first applies a small manifest of the same project (a group of 3 and one subscription), so the
fleet's plan also deletes that group and removes that subscription; the report then says where the first
line naming each stands, against the first addition's section. Release build first: make release. Run from
the repository root.
"""
import argparse
import json
import os
import resource
import subprocess
import tempfile
import time

from benchlib import BUILD, Emulator, generate_fleet


RETIRED = [f"retired-{i}:APA91b" + "r" * 120 for i in range(3)]


def apply_retired(work, env):
    """State that owns a group of 3 and one subscription the fleet manifest does not declare."""
    small = os.path.join(work, "retired.yaml")
    with open(small, "w") as out:
        out.write('project:\n  id: fleet-bench\n  senderId: "100000000001"\ngroups:\n  retired-kiosks:\n    members:\n')
        out.writelines(f'      - "{token}"\n' for token in RETIRED)
        out.write(f'topics:\n  retired-alerts:\n    members: ["{RETIRED[0]}"]\n')
    subprocess.run(
        [os.path.join(BUILD, "fcmctl"), "apply", "--auto-approve", "-f", small, "--state", os.path.join(work, "state.json")],
        check=True, capture_output=True, env=env)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--groups", type=int, default=0)
    parser.add_argument("--devices", type=int, default=100_000)
    parser.add_argument("--sites", type=int, default=200)
    parser.add_argument("--removals", action="store_true")
    args = parser.parse_args()
    work = tempfile.mkdtemp(prefix="fcmctl-markdown-")
    fleet = os.path.join(work, "fleet")
    generate_fleet(fleet, "--groups", str(args.groups), "--devices", str(args.devices), "--sites", str(args.sites))
    emulator = Emulator()
    try:
        base, env = emulator.base, emulator.env
        if args.removals:
            apply_retired(work, env)
        json_path = os.path.join(work, "plan.json")
        started = time.monotonic()
        plan = subprocess.run(
            [os.path.join(BUILD, "fcmctl"), "plan", "-f", fleet, "--state", os.path.join(work, "state.json"), "--format", "markdown",
             "--json-into", json_path], capture_output=True, text=True, env=env)
        wall = time.monotonic() - started
        rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        assert plan.returncode == 0, plan.stderr[-2000:]
        markdown = plan.stdout
        with open(json_path) as handle:
            summary = json.load(handle)["summary"]
        html = subprocess.run(["cmark-gfm", "--unsafe", "-e", "table"], input=markdown, capture_output=True, text=True, check=True).stdout
        last = markdown.rstrip("\n").split("\n")[-1]
        print(f"changes: {summary['subscriptions_to_add'] + summary['members_to_add']:,} "
              f"({summary['subscriptions_to_add']:,} subscriptions, {summary['groups_to_create']:,} groups)")
        print(f"markdown: {len(markdown):,} characters (budget 60,000); sections {markdown.count('<details')}; "
              f"rendered <details> {html.count('<details')} / </details> {html.count('</details>')}; table: {'<table>' in html}")
        print(f"starts with the summary: {markdown.startswith('<!-- fcmctl:plan -->')}; last line: {last[:100]}")
        print(f"plan wall {wall:.1f} s, peak RSS {rss:.0f} MiB (JSON document {os.path.getsize(json_path) / 1e6:.0f} MB)")
        if args.removals:
            lines = markdown.split("\n")
            first_addition = next((i for i, line in enumerate(lines) if "<details><summary><code>+ " in line or
                                   ("<details><summary><code>~ " in line and " −0 " in line)), len(lines))
            for address in ("group/retired-kiosks", "topic/retired-alerts"):
                line = next((i for i, text in enumerate(lines) if address in text), None)
                print(f"{address}: first named on line {line + 1 if line is not None else 'never'} "
                      f"(first addition section: line {first_addition + 1}; shown before it: {line is not None and line < first_addition})")
    finally:
        emulator.stop()


if __name__ == "__main__":
    main()
