#!/usr/bin/env python3
"""Benchmark: the inspector with 100,000 registrations and 1,000,000 subscriptions loaded.

Writes an export (every registration in `broadcast`, a topic of 100,000 subscribers, and in 9 of 1,000 other
topics; 1,000 of them with a delivered message; 100 device groups), starts a release fcm-emulator with
`--import DIR`, and loads pages in headless Chromium (Debian's chromium and chromium-driver, as the browser
test uses): the registrations view at `/`, the topics view, the subscribers of `broadcast`, a device with its
inbox, and two searches. "First rows" is the time from the start of navigation to the first rows of the
view's table (the page's `inspector-first-rows` performance mark); "API" the listing request alone, from
Python. Prints medians of --runs, and the first run ("cold"). Build first: swift build -c release --static-swift-stdlib --product fcm-emulator
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "Tests", "cli"))
from inspectorbrowser import start_browser  # noqa: E402

PROJECT = "bench"


def token(i):
    return f"bench{i:06d}:APA91b" + format(i * 7919 % 10**12, "012d") * 10


def write_export(path, registrations, topics_each, pool):
    created = "2026-01-15T01:30:15.010Z"
    message = json.dumps({"token": "", "notification": {"title": "Hello", "body": "A benchmark message"}}, sort_keys=True)
    with open(path, "w") as out:
        out.write('{"format": "fcm-emulator-export", "version": 2, "clock": {"now": null, "new_project": false},')
        out.write(f'"senders": {{"123": "{PROJECT}"}}, "next_group_id": 101, "groups": [')
        out.write(",".join(json.dumps({"sender_id": "123", "name": f"user-{g}", "id": g + 1, "members": [token(g * 7 + k) for k in range(3)]})
                           for g in range(100)))
        out.write('], "registrations": [')
        for i in range(registrations):
            topics = {"broadcast": created}
            for k in range(topics_each - 1):
                topics[f"topic-{(i * 7 + k * 101) % pool:04d}"] = created
            inbox = [] if i % 100 else [{"name": f"projects/{PROJECT}/messages/{i}", "received_at": created, "message": json.loads(message)}]
            record = {"id": token(i), "kind": "token", "project": PROJECT, "platform": ["ANDROID", "IOS", "WEB"][i % 3],
                      "app": f"com.bench.app{i % 5}", "uninstalled": False, "topics": topics, "inbox": inbox}
            out.write(("," if i else "") + json.dumps(record))
        out.write("]}\n")


def get(base, path):
    started = time.perf_counter()
    with urllib.request.urlopen(base + path) as response:
        body = json.load(response)
    return (time.perf_counter() - started) * 1000, body


def first_rows(driver, url, table):
    driver.get("about:blank")
    driver.get(url)
    deadline = time.monotonic() + 60
    script = ("const m = performance.getEntriesByName('inspector-first-rows'); const t = document.getElementById(arguments[0]);"
              "return m.length && t && t.dataset.ready === 'true' ? [m[0].startTime, t.querySelectorAll('tbody tr').length] : null")
    while time.monotonic() < deadline:
        found = driver.execute_script(script, table)
        if found:
            return found
        time.sleep(0.01)
    raise RuntimeError(f"{url}: no rows within 60 s")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--registrations", type=int, default=100_000)
    parser.add_argument("--topics-each", type=int, default=10)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--emulator", default=os.path.join(ROOT, ".build/release/fcm-emulator"))
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as work:
        started = time.perf_counter()
        write_export(os.path.join(work, "fcm-emulator-export.json"), args.registrations, args.topics_each, 1000)
        size = os.path.getsize(os.path.join(work, "fcm-emulator-export.json"))
        print(f"export: {args.registrations:,} registrations, {args.registrations * args.topics_each:,} subscriptions, "
              f"{size / 1e6:.0f} MB, written in {time.perf_counter() - started:.1f} s")
        started = time.perf_counter()
        emulator = subprocess.Popen([args.emulator, "--port", "0", "--import", work], stdout=subprocess.PIPE, text=True)
        line = emulator.stdout.readline()
        assert line.startswith("fcm-emulator listening on http://"), line
        print(f"--import to the listening line: {time.perf_counter() - started:.1f} s")
        base = line.strip().split(" on ")[1]
        try:
            _, stats = get(base, "/emulator/v1/stats")
            assert (stats["registrations"], stats["subscriptions"]) == (args.registrations, args.registrations * args.topics_each), stats
            pages = [
                ("registrations (/)", "/", "registrations-table", "/emulator/v1/registrations?page_size=50"),
                ("topics", "/#topics", "topics-table", "/emulator/v1/topics?page_size=50"),
                ("subscribers of broadcast", "/#topic/broadcast?project=bench", "subscribers-table",
                 "/emulator/v1/topics/broadcast/subscribers?project=bench&page_size=50"),
                ("search topic:topic-0999", "/#registrations?q=topic%3Atopic-0999", "registrations-table",
                 "/emulator/v1/registrations?page_size=50&q=topic%3Atopic-0999"),
                ("search 099999 (scans all)", "/#registrations?q=bench099999", "registrations-table",
                 "/emulator/v1/registrations?page_size=50&q=bench099999"),
                ("groups", "/#groups", "groups-table", "/emulator/v1/groups?page_size=50"),
            ]
            driver = start_browser()
            try:
                # "cold": the first load after the import, which also builds the sorted views the listings page through.
                print(f"{'view':<28} {'first rows ms':>14} {'cold ms':>8} {'rows':>5} {'API ms':>8}")
                for name, fragment, table, path in pages:
                    paints, apis, rows = [], [], 0
                    for _ in range(args.runs):
                        paint, rows = first_rows(driver, base + fragment, table)
                        paints.append(paint)
                        apis.append(get(base, path)[0])
                    print(f"{name:<28} {statistics.median(paints):>14.0f} {paints[0]:>8.0f} {rows:>5} {statistics.median(apis):>8.1f}")
                # The next page of the big topic, as the page's Next button asks for it.
                _, page = get(base, "/emulator/v1/topics/broadcast/subscribers?project=bench&page_size=50")
                later = statistics.median(get(base, "/emulator/v1/topics/broadcast/subscribers?project=bench&page_size=50&page_token="
                                              + page["next_page_token"])[0] for _ in range(args.runs))
                print(f"{'next page of broadcast':<28} {'':>14} {'':>8} {'':>5} {later:>8.1f}")
                _, stats = get(base, "/emulator/v1/stats")
                started = time.perf_counter()
                with urllib.request.urlopen(base + "/emulator/v1/export") as response:
                    exported = len(response.read())
                print(f"GET /emulator/v1/export: {exported / 1e6:.0f} MB in {time.perf_counter() - started:.1f} s")
            finally:
                driver.quit()
            rss = open(f"/proc/{emulator.pid}/status").read().split("VmRSS:")[1].split("\n")[0].strip()
            print(f"emulator resident memory: {rss}")
        finally:
            emulator.terminate()
            emulator.wait()


if __name__ == "__main__":
    main()
