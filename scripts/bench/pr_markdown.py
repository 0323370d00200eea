#!/usr/bin/env python3
"""The pull-request Markdown of a 1,000,000-change plan, through the real binary.

Generates the fleet (100,000 devices, 2,000 topics, 1,000,000 subscriptions; no groups unless --groups),
plans it against an empty fcm-emulator with `--format markdown` and `--json-into`, and reports the
Markdown's size against the 60,000-character budget, whether cmark-gfm (GitHub's renderer) renders it with
balanced <details>, the summary at the top and the omission line at the end, and the wall time and peak RSS.
Release build first: make release. Run from the repository root.
"""
import argparse
import json
import os
import resource
import subprocess
import tempfile
import time

from benchlib import BUILD, Emulator, generate_fleet


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--groups", type=int, default=0)
    args = parser.parse_args()
    work = tempfile.mkdtemp(prefix="fcmctl-markdown-")
    fleet = os.path.join(work, "fleet")
    generate_fleet(fleet, "--groups", str(args.groups))
    emulator = Emulator()
    try:
        base, env = emulator.base, emulator.env
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
        print(f"markdown: {len(markdown):,} characters (budget 60,000); sections {markdown.count('<details>')}; "
              f"rendered <details> {html.count('<details>')} / </details> {html.count('</details>')}; table: {'<table>' in html}")
        print(f"starts with the summary: {markdown.startswith('<!-- fcmctl:plan -->')}; last line: {last[:100]}")
        print(f"plan wall {wall:.1f} s, peak RSS {rss:.0f} MiB (JSON document {os.path.getsize(json_path) / 1e6:.0f} MB)")
    finally:
        emulator.stop()


if __name__ == "__main__":
    main()
